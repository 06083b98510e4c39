package proxy

import (
	"net/url"
	"testing"

	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// TestValidator_Round validates real loopback proxies of every kind the
// issue names and checks that after one round the pool holds exactly the
// healthy ones, that each proxy saw exactly the checks it should, and that
// real requests through picked proxies reach the proxies and the site.
func TestValidator_Round(t *testing.T) {
	rdb, keys := redisT(t)
	ctx := ctxT(t)
	siteA, siteB := newSite(t), newSite(t)
	hostA := mustURL(t, siteA.URL).Host

	start := starter(t)
	healthy := start(proxytest.NewHTTP())
	auth := start(proxytest.NewAuth("alice", "s3cret"))
	banA := start(proxytest.NewHostBan(hostA))
	socks := start(proxytest.NewSOCKS5("", ""))
	stall := start(proxytest.NewStall())
	garbage := start(proxytest.NewGarbage())
	transparent := start(proxytest.NewTransparentElsewhere()) // on our host it would be accepted
	closed, err := proxytest.ClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	src := writeSource(t, t.TempDir(),
		"# loopback test proxies",
		healthy.Addr(), // bare host:port means http
		auth.Line(),
		"http://"+auth.Addr(), // the same proxy without credentials: another identity
		banA.Line(), socks.Line(), stall.Line(), garbage.Line(), transparent.Line(), closed,
		"ftp://127.0.0.1:21", "not a proxy at all", "127.0.0.1:99999",
		healthy.Line()+" # the same proxy twice",
	)
	v := newValidator(t, rdb, keys, testOptions(src))
	r, err := v.Round(ctx)
	if err != nil {
		t.Fatalf("Round: %v", err)
	}
	if got := r.Sources[0]; got.Proxies != 10 || got.Comments != 1 || got.Junk != 3 {
		t.Errorf("source stats = %+v, want 10 proxy lines, 1 comment, 3 junk", got)
	}
	if r.Admitted != 9 || r.Checked != 9 || r.Passed != 4 || r.Breaker.Open {
		t.Errorf("round = %+v, want 9 admitted, 9 checked, 4 passed, breaker closed", r)
	}

	want := map[ID]bool{}
	for _, s := range []*proxytest.Server{healthy, auth, banA, socks} {
		want[mustParse(t, s.Line()).ID()] = true
	}
	if got := usableIDs(t, rdb, keys); !sameSet(got, want) {
		t.Errorf("usable = %v, want exactly the healthy ones %v", got, want)
	}

	// Each HTTP proxy saw one check request and one CONNECT; the SOCKS5 one
	// one tunnel; the auth proxy also the refused request without
	// credentials; the others one connection each.
	for _, c := range []struct {
		name string
		s    *proxytest.Server
		want int64
	}{{"healthy", healthy, 2}, {"auth", auth, 3}, {"ban", banA, 2}, {"socks5", socks, 1},
		{"stall", stall, 1}, {"garbage", garbage, 1}, {"transparent", transparent, 1}} {
		if got := c.s.Requests(); got != c.want {
			t.Errorf("%s proxy saw %d requests, want %d", c.name, got, c.want)
		}
	}

	l, err := newPool(t, rdb, keys, nil).List(ctx, true)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	states := map[string]State{}
	reasons := map[string]string{}
	for _, e := range l.Proxies {
		states[e.Proxy], reasons[e.Proxy] = e.State, e.Reason
	}
	wantStates := map[string]State{
		"http://" + healthy.Addr(): StateUsable, "http://***@" + auth.Addr(): StateUsable,
		"http://" + auth.Addr(): StateRejected, banA.Line(): StateUsable, socks.Line(): StateUsable,
		stall.Line(): StateFailing, garbage.Line(): StateRejected, transparent.Line(): StateRejected,
		closed: StateFailing,
	}
	for proxy, st := range wantStates {
		if states[proxy] != st {
			t.Errorf("%s: state %q (%s), want %q", proxy, states[proxy], reasons[proxy], st)
		}
	}
	for proxy, reason := range map[string]string{"http://" + auth.Addr(): "proxy authentication required (407)",
		stall.Line(): "timeout", closed: "connection refused", garbage.Line(): "garbage answer (not HTTP)",
		transparent.Line(): "transparent proxy, anonymous required"} {
		if reasons[proxy] != reason {
			t.Errorf("%s: reason %q, want %q", proxy, reasons[proxy], reason)
		}
	}

	// Real requests through the pool reach the proxies and the site.
	pool := newPool(t, rdb, keys, nil)
	before := healthy.Requests() + auth.Requests() + banA.Requests() + socks.Requests()
	target := mustURL(t, siteB.URL+"/page")
	var tunneled int64 // SOCKS5 relays bytes; it cannot mark the request
	for range 20 {
		picked, err := pool.Pick(ctx, target, nil)
		if err != nil {
			t.Fatalf("Pick: %v", err)
		}
		if picked.Proxy.Scheme() == SOCKS5 {
			tunneled++
		}
		status, latency, err := fetchVia(t, picked, target.String())
		if err != nil || status != 200 {
			t.Fatalf("fetch via %s: %d %v", picked.Proxy, status, err)
		}
		if err := pool.Report(ctx, picked, Success(latency)); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	after := healthy.Requests() + auth.Requests() + banA.Requests() + socks.Requests()
	if after-before != 20 || siteB.hits.Load() != 20 {
		t.Errorf("proxies saw %d requests and the site %d hits, want 20 and 20",
			after-before, siteB.hits.Load())
	}
	if siteA.hits.Load() != 0 {
		t.Errorf("site A saw %d hits, want none", siteA.hits.Load())
	}
	if siteB.direct.Load() != tunneled {
		t.Errorf("site B saw %d requests no HTTP proxy marked, want %d (the SOCKS5 ones)", siteB.direct.Load(), tunneled)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func sameSet[K comparable](a, b map[K]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
