package downloader

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// rig is a running Downloader on the test Redis, with what its requests
// came to.
type rig struct {
	t    *testing.T
	ctx  context.Context
	rdb  *redis.Client
	keys cluster.Keys
	d    *Downloader
	mu   sync.Mutex
	got  map[string]Result
	done chan fetched
}

// fetched is a request's Result, with the request.
type fetched struct {
	Result
	Request *Request
}

func newRig(t *testing.T, opts Options) *rig { t.Helper(); return newRigWith(t, opts, Deps{}) }

// newRigWith is newRig with deps' Renderer and Metrics.
func newRigWith(t *testing.T, opts Options, deps Deps) *rig {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	fopts := fetch.DefaultOptions()
	d, err := New(opts, Deps{Redis: rdb, Keys: keys, Fetcher: fetch.New(fopts), Renderer: deps.Renderer, Metrics: deps.Metrics})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = d.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-stopped })
	return &rig{t: t, ctx: ctx, rdb: rdb, keys: keys, d: d, got: map[string]Result{}, done: make(chan fetched, 1000)}
}

// fastOptions retry quickly, for tests.
func fastOptions() Options {
	o := DefaultOptions()
	o.RetryBase, o.RetryMax, o.ProxyWait = 20*time.Millisecond, 200*time.Millisecond, 50*time.Millisecond
	return o
}

// job is a job spec on loopback sites with the given tweaks.
func (g *rig) job(tweak func(*jobspec.Job)) *Job {
	g.t.Helper()
	spec := jobspec.Default()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "test", []string{"http://127.0.0.1/"}, true
	spec.DetailLink = &jobspec.LinkRule{CSS: "a"}
	spec.Fields = map[string]jobspec.FieldRule{"t": {CSS: "h1"}}
	spec.PerHostRPS, spec.MaxRetries = 1000, 2
	if tweak != nil {
		tweak(&spec)
	}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		g.t.Fatal(err)
	}
	j, err := g.d.NewJob(&spec)
	if err != nil {
		g.t.Fatal(err)
	}
	return j
}

// submit submits a request for url.
func (g *rig) submit(j *Job, url string) { g.submitKind(j, url, "") }

// submitKind submits a request for url as a page of kind.
func (g *rig) submitKind(j *Job, url, kind string) {
	g.fetch(g.ctx, &Request{URL: url, Job: j, Kind: kind})
}

// fetch fetches r under ctx on a goroutine of its own, as the master and
// the slaves do; its result is kept by URL and sent on g.done.
func (g *rig) fetch(ctx context.Context, r *Request) {
	go func() {
		res := g.d.Fetch(ctx, r)
		g.mu.Lock()
		g.got[r.URL] = res
		g.mu.Unlock()
		g.done <- fetched{Result: res, Request: r}
	}()
}

// wait returns the next n results.
func (g *rig) wait(n int, within time.Duration) []fetched {
	g.t.Helper()
	var out []fetched
	deadline := time.After(within)
	for len(out) < n {
		select {
		case r := <-g.done:
			out = append(out, r)
		case <-deadline:
			g.t.Fatalf("%d of %d requests finished within %s", len(out), n, within)
		}
	}
	return out
}

// site is an httptest server that counts requests per path and records
// them, and answers with handler.
type site struct {
	*httptest.Server
	mu       sync.Mutex
	hits     map[string]int
	at       map[string][]time.Time
	agents   []string
	headers  []http.Header
	paths    []string // of each request, beside its headers
	inflight int
	peak     int
}

func newSite(t *testing.T, handler http.HandlerFunc) *site {
	s := &site{hits: map[string]int{}, at: map[string][]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.at[r.URL.Path] = append(s.at[r.URL.Path], time.Now())
		s.agents = append(s.agents, r.UserAgent())
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.Path)
		s.inflight++
		s.peak = max(s.peak, s.inflight)
		s.mu.Unlock()
		defer func() { s.mu.Lock(); s.inflight--; s.mu.Unlock() }()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func html(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(body))
}

// seedProxies starts one proxy per constructor and puts them all in the
// pool as checked and usable (tunnel says whether they may CONNECT).
func (g *rig) seedProxies(tunnel bool, start ...func() (*proxytest.Server, error)) []*proxytest.Server {
	g.t.Helper()
	var servers []*proxytest.Server
	var seeds []proxy.Seeded
	for _, newServer := range start {
		srv, err := newServer()
		if err != nil {
			g.t.Fatal(err)
		}
		g.t.Cleanup(srv.Close)
		p, err := proxy.Parse(srv.Line())
		if err != nil {
			g.t.Fatal(err)
		}
		servers = append(servers, srv)
		seeds = append(seeds, proxy.Seeded{Proxy: p, Latency: time.Millisecond, Tunnel: tunnel})
	}
	v, err := proxy.NewValidator(g.rdb, g.keys, proxy.DefaultOptions())
	if err != nil {
		g.t.Fatal(err)
	}
	if err := v.Seed(g.ctx, seeds); err != nil {
		g.t.Fatal(err)
	}
	return servers
}

// banned reports whether the pool bans srv's proxy for host (host:port).
func (g *rig) banned(srv *proxytest.Server, host string) bool {
	p, err := proxy.Parse(srv.Line())
	if err != nil {
		g.t.Fatal(err)
	}
	_, err = g.rdb.ZScore(g.ctx, g.keys.Proxies().Ban(host), string(p.ID())).Result()
	return err == nil
}

// hostOf is the host:port of a test server's URL.
func hostOf(rawURL string) string { return strings.TrimPrefix(rawURL, "http://") }

// elsewhere is s's URL under the host name localhost: the same server,
// another host for the politeness budget.
func elsewhere(s *site) string { return strings.Replace(s.URL, "127.0.0.1", "localhost", 1) }

// clearBans lifts every proxy ban for host.
func (g *rig) clearBans(host string) {
	g.t.Helper()
	if err := g.rdb.Del(g.ctx, g.keys.Proxies().Ban(host)).Err(); err != nil {
		g.t.Fatal(err)
	}
}

// scriptCalls counts the script calls whose first key is one of first's
// values, by name, whether sent alone or in a pipeline.
type scriptCalls struct {
	first map[string]string // name -> first key
	mu    sync.Mutex
	n     map[string]int
}

func (c *scriptCalls) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func (c *scriptCalls) see(cmd redis.Cmder) {
	args := cmd.Args()
	if (cmd.Name() != "evalsha" && cmd.Name() != "eval") || len(args) < 4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	for name, key := range c.first {
		if args[3] == key {
			c.n[name]++
		}
	}
}

func (c *scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.see(cmd)
		return next(ctx, cmd)
	}
}

func (c *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.see(cmd)
		}
		return next(ctx, cmds)
	}
}
