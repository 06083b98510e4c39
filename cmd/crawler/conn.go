package main

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/store"
)

// Defaults of the connection flags.
const (
	defaultRedis = "redis://127.0.0.1:6379/0"
	defaultMongo = "mongodb://127.0.0.1:27017/crawler"
)

// openRedis connects to Redis and checks that it answers. The URL is one of
//
//	redis://[user:pass@]host:port/db              a single server
//	redis://[user:pass@]host1:port,host2:port     Redis Cluster (its seed nodes)
//	redis+sentinel://[user:pass@]h1:26379,h2:26379/mastername[/db]   Sentinel
//
// (rediss:// for TLS), with go-redis's query options (?dial_timeout=3s,
// ?pool_size=50, ...); go-redis's own forms (?addr=host2:port for a
// cluster, ?master_name= for Sentinel) work too. Every key one script
// touches shares a hash tag, so the cluster's processes work unchanged on
// Redis Cluster.
func openRedis(ctx context.Context, raw string) (redis.UniversalClient, error) {
	rdb, err := newRedisClient(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis: %s: %v", redactURL(raw), redactErr(err, raw))
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("--redis: no answer from %s: %v", redactURL(raw), redactErr(err, raw))
	}
	return rdb, nil
}

// newRedisClient parses the URL with go-redis's own parsers, after
// rewriting our comma and sentinel forms into theirs.
func newRedisClient(raw string) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("not a redis:// URL")
	}
	if base, isSentinel := strings.CutSuffix(scheme, "+sentinel"); isSentinel {
		opts, err := redis.ParseFailoverURL(sentinelURL(base, rest))
		if err != nil {
			return nil, err
		}
		if opts.MasterName == "" {
			return nil, fmt.Errorf("no master name: want redis+sentinel://host:26379/mastername")
		}
		retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
		return redis.NewFailoverClient(opts), nil
	}
	cluster := clusterURL(scheme, rest)
	if cluster != "" {
		opts, err := redis.ParseClusterURL(cluster)
		if err != nil {
			return nil, err
		}
		retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
		return redis.NewClusterClient(opts), nil
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
	return redis.NewClient(opts), nil
}

// retries sets the crawler's retry policy where the URL set none: a Redis
// that restarts (a failover, an upgrade) is waited for, not failed on.
func retries(max *int, minBackoff, maxBackoff *time.Duration) {
	if *max == 0 {
		*max = 5
	}
	if *minBackoff == 0 {
		*minBackoff = 100 * time.Millisecond
	}
	if *maxBackoff == 0 {
		*maxBackoff = 2 * time.Second
	}
}

// clusterURL turns redis://[auth@]h1,h2,h3[/][?q] into go-redis's
// redis://[auth@]h1?addr=h2&addr=h3[&q]; it returns "" for a single host
// that names no addr= option.
func clusterURL(scheme, rest string) string {
	auth, hosts, path, query := splitURL(rest)
	addrs := strings.Split(hosts, ",")
	if len(addrs) == 1 && !strings.Contains("&"+query, "&addr=") {
		return ""
	}
	extra := make([]string, 0, len(addrs))
	for _, a := range addrs[1:] {
		extra = append(extra, "addr="+url.QueryEscape(a))
	}
	if query != "" {
		extra = append(extra, query)
	}
	if path != "" && path != "0" {
		extra = append(extra, "db="+path) // refused by go-redis: a cluster has only database 0
	}
	return scheme + "://" + auth + addrs[0] + "?" + strings.Join(extra, "&")
}

// sentinelURL turns [auth@]h1,h2/master[/db][?q] into go-redis's
// redis://[auth@]h1/db?addr=h2&master_name=master[&q].
func sentinelURL(scheme, rest string) string {
	auth, hosts, path, query := splitURL(rest)
	master, db, _ := strings.Cut(path, "/")
	addrs := strings.Split(hosts, ",")
	q := make([]string, 0, len(addrs)+1)
	for _, a := range addrs[1:] {
		q = append(q, "addr="+url.QueryEscape(a))
	}
	if master != "" {
		q = append(q, "master_name="+url.QueryEscape(master))
	}
	if query != "" {
		q = append(q, query)
	}
	return scheme + "://" + auth + addrs[0] + "/" + db + "?" + strings.Join(q, "&")
}

// splitURL cuts what follows "scheme://" into "user:pass@", hosts, path
// (without its leading slash) and query.
func splitURL(rest string) (auth, hosts, path, query string) {
	rest, query, _ = strings.Cut(rest, "?")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		auth, rest = rest[:at+1], rest[at+1:]
	}
	hosts, path, _ = strings.Cut(rest, "/")
	return auth, hosts, path, query
}

// userinfoRE finds the password of a URL's userinfo, whether or not the
// rest of the URL parses.
var userinfoRE = regexp.MustCompile(`(://[^:/@?#]*):([^@/?#]*)@`)

// redactURL hides the password in a URL, for messages and logs. It works
// on strings that do not parse as URLs too, so a typo in a URL never puts
// its password in an error.
func redactURL(u string) string {
	return userinfoRE.ReplaceAllString(u, "$1:xxxxx@")
}

// redactErr returns err's message with the URL's password hidden: drivers
// quote the URL they failed on.
func redactErr(err error, raw string) string {
	msg := err.Error()
	if m := userinfoRE.FindStringSubmatch(raw); m != nil && m[2] != "" {
		msg = strings.ReplaceAll(msg, m[2], "xxxxx")
		if dec, derr := url.PathUnescape(m[2]); derr == nil && dec != "" {
			msg = strings.ReplaceAll(msg, dec, "xxxxx")
		}
	}
	return redactURL(msg)
}

// openMongo connects to the MongoDB URI.
func openMongo(ctx context.Context, uri string) (*store.Mongo, error) {
	if !strings.HasPrefix(uri, "mongodb://") && !strings.HasPrefix(uri, "mongodb+srv://") {
		return nil, fmt.Errorf("--mongo: %q is not a mongodb:// URI", redactURL(uri))
	}
	m, err := store.OpenMongo(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("--mongo: %s", redactErr(err, uri))
	}
	return m, nil
}
