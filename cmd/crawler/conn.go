package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/store"
)

// Defaults of the connection flags.
const (
	defaultRedis = "redis://127.0.0.1:6379/0"
	defaultMongo = "mongodb://127.0.0.1:27017/crawler"
)

// clusterFlags are the flags every process of one cluster must agree on.
type clusterFlags struct {
	redis     string
	prefix    string
	maxSlaves int
}

func (c *clusterFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.redis, "redis", defaultRedis, "Redis URL: redis://[user:pass@]host:port/db")
	f.StringVar(&c.prefix, "prefix", cluster.DefaultPrefix, "prefix of every Redis key of this cluster")
	f.IntVar(&c.maxSlaves, "max-slaves", cluster.DefaultMaxSlaves, "size a of the virtual node table: the most slaves the cluster may have")
}

func (c *clusterFlags) keys() cluster.Keys { return cluster.Keys{Prefix: c.prefix} }

// openRedis connects to Redis and checks that it answers. The URL is one of
//
//	redis://[user:pass@]host:port/db              a single server
//	redis://[user:pass@]host1:port,host2:port     Redis Cluster (its seed nodes)
//	redis+sentinel://[user:pass@]h1:26379,h2:26379/mastername[/db]   Sentinel
//
// (rediss:// for TLS). Every key one script touches shares a hash tag, so
// the cluster's processes work unchanged on Redis Cluster.
func openRedis(ctx context.Context, url string) (redis.UniversalClient, error) {
	opts, err := parseRedisURL(url)
	if err != nil {
		return nil, fmt.Errorf("--redis: %q: %w", redactURL(url), err)
	}
	opts.MaxRetries = 5
	opts.MinRetryBackoff = 100 * time.Millisecond
	opts.MaxRetryBackoff = 2 * time.Second
	rdb := redis.NewUniversalClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("--redis: no answer from %s: %w", redactURL(url), err)
	}
	return rdb, nil
}

// parseRedisURL reads the three URL forms openRedis takes.
func parseRedisURL(raw string) (*redis.UniversalOptions, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("not a redis:// URL")
	}
	sentinel := scheme == "redis+sentinel" || scheme == "rediss+sentinel"
	if sentinel {
		scheme = strings.TrimSuffix(scheme, "+sentinel")
	}
	if scheme != "redis" && scheme != "rediss" {
		return nil, fmt.Errorf("scheme %q is not redis, rediss or redis+sentinel", scheme)
	}
	userinfo, hostsPath := "", rest
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		userinfo, hostsPath = rest[:at+1], rest[at+1:]
	}
	hosts, path, _ := strings.Cut(hostsPath, "/")
	addrs := strings.Split(hosts, ",")
	master := ""
	if sentinel {
		master, path, _ = strings.Cut(path, "/")
		if master == "" {
			return nil, fmt.Errorf("sentinel URL names no master: want redis+sentinel://host:26379/mastername")
		}
	}
	// Parse the first address with the standard parser for auth, db and TLS.
	single, err := redis.ParseURL(scheme + "://" + userinfo + addrs[0] + "/" + path)
	if err != nil {
		return nil, err
	}
	if len(addrs) > 1 && !sentinel && single.DB != 0 {
		return nil, fmt.Errorf("Redis Cluster has only database 0")
	}
	return &redis.UniversalOptions{
		Addrs: addrs, MasterName: master, Username: single.Username, Password: single.Password,
		DB: single.DB, TLSConfig: single.TLSConfig, IsClusterMode: len(addrs) > 1 && !sentinel,
	}, nil
}

// redactURL hides a password in a URL, for messages.
func redactURL(u string) string { return store.Redact(u) }

// crawlStore is where a master or slave process writes items and failures.
type crawlStore interface {
	itemStore
	Close(ctx context.Context) error
}

// jsonlStore adapts store.JSONL to crawlStore.
type jsonlStore struct{ *store.JSONL }

// Close flushes and closes the files.
func (j jsonlStore) Close(context.Context) error { return j.JSONL.Close() }

// openStore opens the JSON Lines file output when given, else MongoDB.
func openStore(ctx context.Context, mongoURI, output string) (crawlStore, error) {
	if output != "" {
		j, err := store.OpenJSONL(output)
		if err != nil {
			return nil, fmt.Errorf("--output: %w", err)
		}
		return jsonlStore{j}, nil
	}
	return openMongo(ctx, mongoURI)
}

// openProcess opens what a master or slave process needs: Redis and the
// store (the JSON Lines file output when given, else MongoDB). The
// returned function closes both.
func openProcess(ctx context.Context, cf clusterFlags, mongoURI, output string) (redis.UniversalClient, crawlStore, func(), error) {
	rdb, err := openRedis(ctx, cf.redis)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := openStore(ctx, mongoURI, output)
	if err != nil {
		rdb.Close()
		return nil, nil, nil, err
	}
	return rdb, st, func() { _ = st.Close(context.Background()); rdb.Close() }, nil
}

// batched gathers a slave's item writes to MongoDB into batches of up to
// one per fetcher, each written in one round trip; other stores as they are.
func batched(st itemStore, concurrency int) itemStore {
	if m, ok := st.(*store.Mongo); ok {
		return store.NewBatchWriter(m, concurrency, 5*time.Millisecond)
	}
	return st
}

// openMongo connects to the MongoDB URI.
func openMongo(ctx context.Context, uri string) (*store.Mongo, error) {
	if !strings.HasPrefix(uri, "mongodb://") && !strings.HasPrefix(uri, "mongodb+srv://") {
		return nil, fmt.Errorf("--mongo: %q is not a mongodb:// URI", redactURL(uri))
	}
	m, err := store.OpenMongo(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("--mongo: %w", err)
	}
	return m, nil
}
