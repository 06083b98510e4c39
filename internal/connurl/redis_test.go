package connurl

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestParseRedis: each URL form gives the client of its kind, with its
// addresses, database, credentials and master name, DisableIdentity and
// the retry policy where the URL set none.
func TestParseRedis(t *testing.T) {
	for _, tt := range []struct {
		name, raw string
		check     func(t *testing.T, r Redis)
	}{
		{"single server", "redis://u:p@127.0.0.1:6379/3", func(t *testing.T, r Redis) {
			o := single(t, r)
			if o.Addr != "127.0.0.1:6379" || o.DB != 3 || o.Username != "u" || o.Password != "p" {
				t.Errorf("%+v", o)
			}
			if o.MaxRetries != DefaultMaxRetries || o.MinRetryBackoff != DefaultMinRetryBackoff || o.MaxRetryBackoff != DefaultMaxRetryBackoff {
				t.Errorf("retries %d %v %v", o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff)
			}
		}},
		{"the URL's retry policy kept", "redis://127.0.0.1:6379/0?max_retries=2&min_retry_backoff=1s", func(t *testing.T, r Redis) {
			if o := single(t, r); o.MaxRetries != 2 || o.MinRetryBackoff != time.Second || o.MaxRetryBackoff != DefaultMaxRetryBackoff {
				t.Errorf("retries %d %v %v", o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff)
			}
		}},
		{"TLS", "rediss://127.0.0.1:6380", func(t *testing.T, r Redis) {
			if o := single(t, r); o.TLSConfig == nil {
				t.Error("no TLS")
			}
		}},
		{"cluster as a comma list", "redis://u:p@10.0.0.1:7000,10.0.0.2:7001,10.0.0.3:7002?dial_timeout=3s", func(t *testing.T, r Redis) {
			if r.Cluster == nil {
				t.Fatalf("not a cluster: %+v", r)
			}
			o := r.Cluster
			if strings.Join(o.Addrs, " ") != "10.0.0.1:7000 10.0.0.2:7001 10.0.0.3:7002" || o.Username != "u" || o.Password != "p" ||
				o.DialTimeout != 3*time.Second || !o.DisableIdentity || o.MaxRetries != DefaultMaxRetries {
				t.Errorf("%+v", o)
			}
		}},
		{"cluster in go-redis's form", "redis://10.0.0.1:7000?addr=10.0.0.2:7001", func(t *testing.T, r Redis) {
			if r.Cluster == nil || strings.Join(r.Cluster.Addrs, " ") != "10.0.0.1:7000 10.0.0.2:7001" {
				t.Errorf("%+v", r)
			}
		}},
		{"cluster, database 0", "redis://10.0.0.1:7000,10.0.0.2:7001/0", func(t *testing.T, r Redis) {
			if r.Cluster == nil {
				t.Errorf("%+v", r)
			}
		}},
		// go-redis gives the userinfo to the Sentinels (SentinelPassword).
		{"sentinel", "redis+sentinel://u:p@10.0.0.1:26379,10.0.0.2:26379/mymaster/2", func(t *testing.T, r Redis) {
			if r.Sentinel == nil {
				t.Fatalf("not sentinel: %+v", r)
			}
			o := r.Sentinel
			if strings.Join(o.SentinelAddrs, " ") != "10.0.0.1:26379 10.0.0.2:26379" || o.MasterName != "mymaster" ||
				o.DB != 2 || o.SentinelPassword != "p" || !o.DisableIdentity || o.MaxRetries != DefaultMaxRetries {
				t.Errorf("%+v", o)
			}
		}},
		{"sentinel over TLS", "rediss+sentinel://10.0.0.1:26379/mymaster", func(t *testing.T, r Redis) {
			if r.Sentinel == nil || r.Sentinel.TLSConfig == nil {
				t.Errorf("%+v", r)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRedis(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
			rdb := r.NewClient()
			defer rdb.Close()
			if want := map[bool]string{true: "*redis.ClusterClient", false: "*redis.Client"}[r.Cluster != nil]; typeName(rdb) != want {
				t.Errorf("NewClient = %s, want %s", typeName(rdb), want)
			}
		})
	}
}

func single(t *testing.T, r Redis) *redis.Options {
	t.Helper()
	if r.Single == nil || r.Cluster != nil || r.Sentinel != nil {
		t.Fatalf("not a single server: %+v", r)
	}
	if !r.Single.DisableIdentity {
		t.Error("the client sends CLIENT SETINFO on every connection")
	}
	return r.Single
}

func typeName(rdb redis.UniversalClient) string {
	switch rdb.(type) {
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	case *redis.Client:
		return "*redis.Client"
	}
	return "another type"
}

// TestParseRedis_errors: a URL that does not parse is refused with what
// is wrong, and never with its password, however it is malformed.
func TestParseRedis_errors(t *testing.T) {
	const secret = "s3cret"
	for _, tt := range []struct {
		name, raw, want string
	}{
		{"no scheme", "127.0.0.1:6379", "not a redis:// URL"},
		{"another scheme", "http://u:" + secret + "@127.0.0.1:6379", "invalid URL scheme"},
		{"sentinel without a master", "redis+sentinel://u:" + secret + "@10.0.0.1:26379", "no master name"},
		{"a database on a cluster", "redis://u:" + secret + "@10.0.0.1:7000,10.0.0.2:7001/3", "db"},
		{"a bad port", "redis://u:" + secret + "@127.0.0.1:port/0", "port"},
		{"a bad database", "redis://u:" + secret + "@127.0.0.1:6379/db", "database"},
		{"an unescaped / in the password", "redis://u:se/" + secret + "@127.0.0.1:6379/0", "must be percent-encoded"},
		{"an unescaped # in the password", "redis://u:se#" + secret + "@127.0.0.1:6379/0", "must be percent-encoded"},
		{"a secret in the query", "redis://127.0.0.1:6379/0?password=" + secret + "&dial_timeout=x", "dial_timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRedis(tt.raw)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, secret) {
				t.Errorf("err = %q: want %q in it and no password", msg, tt.want)
			}
		})
	}
}

// TestCheckMongo refuses what is not a MongoDB URI or does not parse,
// never quoting the password.
func TestCheckMongo(t *testing.T) {
	for _, ok := range []string{"mongodb://127.0.0.1:27017/crawler", "mongodb+srv://u:p@cluster0.example.net/db", "mongodb://u:p%2Fq@h1,h2/db"} {
		if err := CheckMongo(ok); err != nil {
			t.Errorf("CheckMongo(%s) = %v", ok, err)
		}
	}
	for raw, want := range map[string]string{
		"redis://u:s3cret@127.0.0.1":            "is not a mongodb:// URI",
		"mongodb://u:s3/cret@127.0.0.1:27017/x": "must be percent-encoded",
		"mongodb://u:s3cret@127.0.0.1:%zz/x":    "invalid",
	} {
		err := CheckMongo(raw)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "cret") {
			t.Errorf("CheckMongo(%s) = %v, want %q without the password", raw, err, want)
		}
	}
}
