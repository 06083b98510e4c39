package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/redact"
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
	connect, err := parseRedis(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis: %s", badURL(raw, err, func(s string) error {
			_, err := parseRedis(s)
			return err
		}))
	}
	rdb := connect()
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("--redis: no answer from %s: %v", store.Redact(raw), redactErr(err, raw))
	}
	return rdb, nil
}

// parseRedis parses the URL with go-redis's own parsers, after rewriting
// our comma and sentinel forms into theirs, and returns the function that
// builds the client. Every client sets DisableIdentity: go-redis would
// otherwise send CLIENT SETINFO on each new connection, which Redis before
// 7.2 refuses, each refusal counted in crawler_redis_errors_total.
func parseRedis(raw string) (func() redis.UniversalClient, error) {
	if err := checkUserinfo(raw); err != nil {
		return nil, err
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("not a redis:// URL")
	}
	if base, isSentinel := strings.CutSuffix(scheme, "+sentinel"); isSentinel {
		return parseSentinel(base, rest)
	}
	if cluster := clusterURL(scheme, rest); cluster != "" {
		opts, err := redis.ParseClusterURL(cluster)
		if err != nil {
			return nil, err
		}
		retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
		opts.DisableIdentity = true
		return func() redis.UniversalClient { return redis.NewClusterClient(opts) }, nil
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
	opts.DisableIdentity = true
	return func() redis.UniversalClient { return redis.NewClient(opts) }, nil
}

// parseSentinel parses a redis+sentinel:// URL (scheme is what precedes
// "+sentinel", rest what follows "://").
func parseSentinel(scheme, rest string) (func() redis.UniversalClient, error) {
	opts, err := redis.ParseFailoverURL(sentinelURL(scheme, rest))
	if err != nil {
		return nil, err
	}
	if opts.MasterName == "" {
		return nil, fmt.Errorf("no master name: want redis+sentinel://host:26379/mastername")
	}
	retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
	opts.DisableIdentity = true
	return func() redis.UniversalClient { return redis.NewFailoverClient(opts) }, nil
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

// checkUserinfo refuses a URL whose last "@" lies past the end of its
// authority: a user name or password holding an unescaped / ? or #, which
// URL parsers cut in the wrong place (taking part of the password for the
// host, or its end for the path).
func checkUserinfo(raw string) error {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil
	}
	end := strings.IndexAny(rest, "/?#")
	if at := strings.LastIndex(rest, "@"); end >= 0 && at > end {
		return errors.New("an @ past the host's start")
	}
	return nil
}

// badURL says why raw did not parse (err) without quoting any part of its
// user name or password: parse is run again on raw with its userinfo
// replaced, and when that copy parses, the userinfo was the trouble.
func badURL(raw string, err error, parse func(string) error) string {
	shown := store.Redact(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	at := strings.LastIndex(rest, "@")
	if !ok || at < 0 {
		return fmt.Sprintf("%s: %v", shown, err) // no userinfo: nothing to hide
	}
	err = parse(scheme + "://xxxxx:xxxxx@" + rest[at+1:])
	if err == nil {
		return shown + ": the user name or password holds a character that must be percent-encoded " +
			"(/ as %2F, # as %23, ? as %3F, @ as %40, % as %25)"
	}
	return fmt.Sprintf("%s: %v", shown, err)
}

// redactErr returns err's message with the URL's credentials hidden:
// drivers quote the URL they failed on, or a secret of it alone.
func redactErr(err error, raw string) string {
	return redact.Text(err.Error(), raw)
}

// openMongo connects to the MongoDB URI.
func openMongo(ctx context.Context, uri string) (*store.Mongo, error) {
	if !strings.HasPrefix(uri, "mongodb://") && !strings.HasPrefix(uri, "mongodb+srv://") {
		return nil, fmt.Errorf("--mongo: %q is not a mongodb:// URI", store.Redact(uri))
	}
	if err := parseMongo(uri); err != nil {
		return nil, fmt.Errorf("--mongo: %s", badURL(uri, err, parseMongo))
	}
	m, err := store.OpenMongo(ctx, uri)
	if errors.Is(err, store.ErrUnreachable) {
		return nil, fmt.Errorf("--mongo: %w", err) // its URI redacted already
	}
	if err != nil {
		return nil, fmt.Errorf("--mongo: %s", redactErr(err, uri))
	}
	return m, nil
}

// parseMongo checks that uri parses as a URL, so that the driver and
// store.OpenMongo never quote one that does not.
func parseMongo(uri string) error {
	if err := checkUserinfo(uri); err != nil {
		return err
	}
	_, err := url.Parse(uri)
	return err
}
