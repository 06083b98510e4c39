package connurl

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a parsed --redis URL: exactly one of its fields is set, by the
// URL's form. Every form sets DisableIdentity (go-redis would otherwise
// send CLIENT SETINFO on each new connection, which Redis before 7.2
// refuses) and the crawler's retry policy where the URL set none.
type Redis struct {
	// Single is a redis:// URL of one server.
	Single *redis.Options
	// Cluster is a Redis Cluster: redis://h1:port,h2:port (its seed nodes),
	// or go-redis's redis://h1:port?addr=h2:port.
	Cluster *redis.ClusterOptions
	// Sentinel is a redis+sentinel:// URL: the master a set of Sentinels
	// names.
	Sentinel *redis.FailoverOptions
}

// NewClient returns a client of the URL's form; the caller closes it.
func (r Redis) NewClient() redis.UniversalClient {
	switch {
	case r.Cluster != nil:
		return redis.NewClusterClient(r.Cluster)
	case r.Sentinel != nil:
		return redis.NewFailoverClient(r.Sentinel)
	}
	return redis.NewClient(r.Single)
}

// ParseRedis parses one of
//
//	redis://[user:pass@]host:port/db              a single server
//	redis://[user:pass@]host1:port,host2:port     Redis Cluster (its seed nodes)
//	redis+sentinel://[user:pass@]h1:26379,h2:26379/mastername[/db]   Sentinel
//
// (rediss:// for TLS), with go-redis's query options (?dial_timeout=3s,
// ?pool_size=50, ...); go-redis's own forms (?addr=host2:port for a
// cluster, ?master_name= for Sentinel) work too. Our comma and sentinel
// forms are rewritten into go-redis's and parsed by its own parsers. An
// error wraps ErrInvalid and quotes the URL with its credentials hidden.
func ParseRedis(raw string) (Redis, error) {
	r, err := parseRedis(raw)
	if err != nil {
		return Redis{}, invalid(raw, err, func(s string) error {
			_, err := parseRedis(s)
			return err
		})
	}
	return r, nil
}

func parseRedis(raw string) (Redis, error) {
	if err := checkUserinfo(raw); err != nil {
		return Redis{}, err
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Redis{}, errors.New("not a redis:// URL")
	}
	if base, isSentinel := strings.CutSuffix(scheme, "+sentinel"); isSentinel {
		return parseSentinel(base, rest)
	}
	if cluster := clusterURL(scheme, rest); cluster != "" {
		opts, err := redis.ParseClusterURL(cluster)
		if err != nil {
			return Redis{}, err
		}
		retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
		opts.DisableIdentity = true
		return Redis{Cluster: opts}, nil
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return Redis{}, err
	}
	retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
	opts.DisableIdentity = true
	return Redis{Single: opts}, nil
}

// parseSentinel parses a redis+sentinel:// URL (scheme is what precedes
// "+sentinel", rest what follows "://").
func parseSentinel(scheme, rest string) (Redis, error) {
	opts, err := redis.ParseFailoverURL(sentinelURL(scheme, rest))
	if err != nil {
		return Redis{}, err
	}
	if opts.MasterName == "" {
		return Redis{}, errors.New("no master name: want redis+sentinel://host:26379/mastername")
	}
	retries(&opts.MaxRetries, &opts.MinRetryBackoff, &opts.MaxRetryBackoff)
	opts.DisableIdentity = true
	return Redis{Sentinel: opts}, nil
}

// Retry policy the URL may override: a Redis that restarts (a failover, an
// upgrade) is waited for, not failed on.
const (
	// DefaultMaxRetries is how many times a command is retried.
	DefaultMaxRetries = 5
	// DefaultMinRetryBackoff is the first wait between retries.
	DefaultMinRetryBackoff = 100 * time.Millisecond
	// DefaultMaxRetryBackoff is the longest wait between retries.
	DefaultMaxRetryBackoff = 2 * time.Second
)

// retries sets the crawler's retry policy where the URL set none.
func retries(max *int, minBackoff, maxBackoff *time.Duration) {
	if *max == 0 {
		*max = DefaultMaxRetries
	}
	if *minBackoff == 0 {
		*minBackoff = DefaultMinRetryBackoff
	}
	if *maxBackoff == 0 {
		*maxBackoff = DefaultMaxRetryBackoff
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
