package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a redis-server process of the benchmark's own on a
// loopback port, keeping nothing on disk, so that Redis's INFO (CPU time,
// commandstats, memory) counts the benchmark's traffic alone: on a Redis
// that others use, their commands and CPU land in the numbers.
type RedisServer struct {
	cmd  *exec.Cmd
	addr string
	dir  string
	done chan struct{}
}

// StartRedis starts the redis-server executable path (found on $PATH
// when it has no slash) on a free loopback port and waits until it
// answers.
func StartRedis(ctx context.Context, path string) (*RedisServer, error) {
	exe, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("redis server: %w", err)
	}
	var last error
	for range 3 { // the free port may be taken between the probe and the start
		s, err := startRedisOnce(ctx, exe)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func startRedisOnce(ctx context.Context, exe string) (*RedisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "crawler-bench-redis")
	if err != nil {
		return nil, err
	}
	s := &RedisServer{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, done: make(chan struct{})}
	s.cmd = exec.Command(exe, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("redis server: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *RedisServer) waitReady(ctx context.Context) error {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DisableIdentity: true})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if rdb.Ping(ctx).Err() == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redis server exited at start: %s", s.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis server on %s does not answer: %s", s.addr, s.logTail())
		}
	}
}

func (s *RedisServer) logTail() string {
	raw, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " / ")
}

// URL is the server's redis:// URL.
func (s *RedisServer) URL() string { return "redis://" + s.addr + "/0" }

// Close stops the server (SIGTERM, SIGKILL after 5 seconds) and removes
// its directory.
func (s *RedisServer) Close() error {
	defer os.RemoveAll(s.dir)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("redis server: killed after 5s")
	}
}

// redisVersion is the server's redis_version.
func redisVersion(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redis info server: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", errors.New("redis info server: no redis_version")
}

// UseRedis returns the URL of the Redis a benchmark runs on: a server of
// its own started from the executable server when that is set, else url.
// The function returned stops the server of its own, if any.
func UseRedis(ctx context.Context, server, url string) (string, func() error, error) {
	if server == "" {
		return url, func() error { return nil }, nil
	}
	s, err := StartRedis(ctx, server)
	if err != nil {
		return "", nil, err
	}
	return s.URL(), s.Close, nil
}
