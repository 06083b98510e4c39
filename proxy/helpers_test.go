package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// starter returns a function that takes a proxytest constructor's results,
// fails the test on an error and closes the proxy when the test ends.
func starter(t *testing.T) func(*proxytest.Server, error) *proxytest.Server {
	return func(s *proxytest.Server, err error) *proxytest.Server {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
}

// site is a loopback target that counts its hits, and the hits that no
// proxytest proxy relayed.
type site struct {
	*httptest.Server
	hits, direct atomic.Int64
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if r.Header.Get(proxytest.ProxiedBy) == "" {
			s.direct.Add(1)
		}
		fmt.Fprintf(w, "<html><body>page %s</body></html>", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

// writeSource writes lines to a source file in the test's directory.
func writeSource(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, "proxies.txt")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// httpProxies starts n loopback HTTP proxies, stopped when t ends, and
// writes a source file listing them.
func httpProxies(t *testing.T, n int) (servers []*proxytest.Server, source string) {
	t.Helper()
	start := starter(t)
	var lines []string
	for range n {
		s := start(proxytest.NewHTTP())
		servers, lines = append(servers, s), append(lines, s.Line())
	}
	return servers, writeSource(t, t.TempDir(), lines...)
}

// testOptions are validator options for loopback proxies: a loopback
// judge, short timeouts.
func testOptions(sources ...string) Options {
	o := DefaultOptions()
	o.Sources = sources
	o.CheckTimeout = time.Second
	o.Lease = 5 * time.Second
	o.Tick = 20 * time.Millisecond
	o.MinSize = 0
	return o
}

func newValidator(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys, o Options) *Validator {
	t.Helper()
	v, err := NewValidator(rdb, keys, o)
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func newPool(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys, edit func(*PoolOptions)) *Pool {
	t.Helper()
	o := DefaultPoolOptions()
	if edit != nil {
		edit(&o)
	}
	p, err := NewPool(rdb, keys, o)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	return p
}

func mustParse(t testing.TB, s string) Proxy {
	t.Helper()
	p, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return p
}

// usableIDs lists the pool's usable proxies.
func usableIDs(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) map[ID]bool {
	t.Helper()
	ids, err := rdb.ZRange(context.Background(), keys.Proxies().Usable(), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[ID]bool{}
	for _, id := range ids {
		out[ID(id)] = true
	}
	return out
}

// fetchVia gets target through picked's proxy, one connection per request
// (keep-alives would defeat rotation), and returns the status.
func fetchVia(t *testing.T, picked Picked, target string) (int, time.Duration, error) {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyURL(picked.URL()), DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	start := time.Now()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(target)
	if err != nil {
		return 0, 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start), nil
}

func redisT(t *testing.T) (*redis.Client, cluster.Keys) { return testenv.Redis(t) }
