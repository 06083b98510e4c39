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

// openRedis connects to the Redis URL and checks that it answers.
func openRedis(ctx context.Context, url string) (redis.UniversalClient, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("--redis: %q: %w", redactURL(url), err)
	}
	opts.MaxRetries = 5
	opts.MinRetryBackoff = 100 * time.Millisecond
	opts.MaxRetryBackoff = 2 * time.Second
	rdb := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("--redis: no answer from %s: %w", redactURL(url), err)
	}
	return rdb, nil
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
