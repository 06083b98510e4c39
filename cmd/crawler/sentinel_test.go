package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestFaults_SentinelFailover: the crawl runs on a Redis primary with one
// replica, watched by a Sentinel; the primary is killed -9 under load, the
// Sentinel promotes the replica, and every process follows it: the crawl
// finishes with nothing lost.
func TestFaults_SentinelFailover(t *testing.T) {
	t.Parallel()
	primaryPort, replicaPort := freePort(t), freePort(t)
	primary := startRedisServer(t, "--port", primaryPort, "--bind", "127.0.0.1", "--dir", t.TempDir(), "--save", "", "--appendonly", "no",
		"--repl-diskless-sync-delay", "0")
	startRedisServer(t, "--port", replicaPort, "--bind", "127.0.0.1", "--dir", t.TempDir(), "--save", "", "--appendonly", "no",
		"--replicaof", "127.0.0.1", primaryPort)
	replica := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + replicaPort})
	t.Cleanup(func() { replica.Close() })
	testenv.Eventually(t, time.Minute, "the replica in sync with the primary", func() bool {
		info, err := replica.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	sentinelPort := startSentinel(t, primaryPort)
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + sentinelPort})
	t.Cleanup(func() { sentinel.Close() })
	testenv.Eventually(t, time.Minute, "the sentinel knows the replica", func() bool {
		replicas, err := sentinel.Replicas(context.Background(), "crawl").Result()
		return err == nil && len(replicas) == 1
	})

	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "crawl", SentinelAddrs: []string{"127.0.0.1:" + sentinelPort}})
	t.Cleanup(func() { rdb.Close() })
	env := redisEnv(t, "redis+sentinel://127.0.0.1:"+sentinelPort+"/crawl/0", rdb)
	f := newFaultCrawl(t, env)
	f.env.startMaster(t, "master")
	procs := f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.atStored(t, 300)

	if err := primary.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the replica promoted", func() bool {
		addr, err := sentinel.GetMasterAddrByName(context.Background(), "crawl").Result()
		return err == nil && len(addr) == 2 && addr[1] == replicaPort
	})
	st := f.finish(t)
	checkSlaveCounts(t, st)
	for i, p := range procs {
		select {
		case <-p.done:
			t.Errorf("slave %d exited by itself:\n%s", i, tail(p.out.String(), 3000))
		default:
		}
	}
	after, err := jobStatus(context.Background(), rdb, env.keys, f.job)
	if err != nil || after.Counters != st.Counters {
		t.Errorf("status after the crawl %+v, %v; want %+v", after, err, st.Counters)
	}
}

// startSentinel runs a Sentinel watching the primary on port primary (as
// master "crawl", quorum 1, down after 1 s) until the test ends, and
// returns its port.
func startSentinel(t *testing.T, primary string) string {
	t.Helper()
	port := freePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor crawl 127.0.0.1 %s 1\n"+
		"sentinel down-after-milliseconds crawl 1000\nsentinel failover-timeout crawl 10000\n", port, dir, primary)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	runRedisServer(t, port, conf, "--sentinel")
	return port
}
