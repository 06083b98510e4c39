package downloader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// TestDownloader_requireProxy: a job with proxy: require and an empty pool
// waits (its page is neither failed nor fetched directly, robots.txt
// included); once a proxy joins the pool, everything goes through it and
// the site sees no direct request.
func TestDownloader_requireProxy(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	j := g.job(func(sp *jobspec.Job) { sp.Proxy = jobspec.ProxyRequire })
	g.submit(j, s.URL+"/page")
	testenv.Eventually(t, 10*time.Second, "the page waiting for a proxy", func() bool { return g.d.waits.len() == 1 })
	if n := s.count("/page") + s.count("/robots.txt"); n != 0 {
		t.Fatalf("with an empty pool the site got %d direct requests", n)
	}
	if g.d.Pending() != 1 {
		t.Fatalf("Pending = %d, want the page waiting for a proxy", g.d.Pending())
	}

	px, err := proxytest.NewHTTP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	p, err := proxy.Parse(px.Line())
	if err != nil {
		t.Fatal(err)
	}
	vopts := proxy.DefaultOptions()
	vopts.Sources = []string{px.Line()}
	v, err := proxy.NewValidator(g.rdb, g.keys, vopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Seed(g.ctx, []proxy.Seeded{{Proxy: p, Latency: time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Fetched {
		t.Fatalf("page %s (%v), want fetched through the proxy", r.Kind, r.Err)
	}
	atSite := int64(s.count("/page") + s.count("/robots.txt"))
	if px.Requests() != atSite || atSite != 2 {
		t.Errorf("the proxy relayed %d requests, the site saw %d; want robots.txt and the page, all through the proxy", px.Requests(), atSite)
	}
}

// TestDownloader_proxyFault: a proxy that dies mid-crawl is evicted and
// the page goes through another one, without a try charged to it.
func TestDownloader_proxyFault(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>page</h1>") })
	g := newRig(t, fastOptions())
	j := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots, sp.MaxRetries = jobspec.ProxyRequire, false, 0 })
	good, err := proxytest.NewHTTP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(good.Close)
	dead, err := proxytest.NewHTTP()
	if err != nil {
		t.Fatal(err)
	}
	dead.Close() // killed: connections refused
	var seeds []proxy.Seeded
	for _, srv := range []*proxytest.Server{good, dead} {
		p, _ := proxy.Parse(srv.Line())
		seeds = append(seeds, proxy.Seeded{Proxy: p, Latency: time.Millisecond})
	}
	v, err := proxy.NewValidator(g.rdb, g.keys, proxy.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Seed(g.ctx, seeds); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 24; i++ { // the dead proxy is all but sure to be picked
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	for _, r := range g.wait(24, 30*time.Second) {
		if r.Kind != Fetched || r.Tries != 1 {
			t.Errorf("%s: %s after %d tries (%v); want fetched, the dead proxy's attempt not charged", r.Request.URL, r.Kind, r.Tries, r.Err)
		}
	}
	pool, _ := proxy.NewPool(g.rdb, g.keys, proxy.DefaultPoolOptions())
	if n, _ := pool.Size(g.ctx); n != 1 {
		t.Errorf("%d usable proxies, want the dead one evicted", n)
	}
}

// TestDownloader_proxyBanned: a site answering 403 through one proxy (it
// banned that proxy's address) does not lose the page: the proxy is banned
// for the host and the page goes through the other proxy, one retry
// charged per refusal. With max_retries 0 a refused page fails; fetched
// directly, a 403 fails at once, as before.
func TestDownloader_proxyBanned(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/forbidden" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	px := g.seedProxies(false, func() (*proxytest.Server, error) { return proxytest.NewHostBan(hostOf(s.URL)) }, proxytest.NewHTTP)
	banned, good := px[0], px[1]
	j := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots, sp.MaxRetries = jobspec.ProxyRequire, false, 2 })
	g.refusedThrough(t, j, s.URL, banned, good, "fetched within 2 tries",
		func(r Result) bool { return r.Kind == Fetched && r.Tries <= 2 })

	t.Run("max_retries 0", func(t *testing.T) {
		j := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots, sp.MaxRetries = jobspec.ProxyRequire, false, 0 })
		g.clearBans(hostOf(s.URL))
		for i := 0; i < 20; i++ {
			g.submit(j, fmt.Sprintf("%s/q%d", s.URL, i))
		}
		refused := 0
		for _, r := range g.wait(20, 30*time.Second) {
			var fe *fetch.Error
			switch {
			case r.Kind == Fetched && r.Tries == 1:
			case r.Kind == Failed && r.Tries == 1 && errors.As(r.Err, &fe) && fe.Status == http.StatusForbidden:
				refused++
			default:
				t.Errorf("%s: %s after %d tries (%v); want fetched, or failed with the 403, at the first try", r.Request.URL, r.Kind, r.Tries, r.Err)
			}
		}
		if refused == 0 {
			t.Error("no page went through the banned proxy: the test proved nothing")
		}
	})
	t.Run("direct", func(t *testing.T) {
		g.submit(g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots = jobspec.ProxyOff, false }), s.URL+"/forbidden")
		if r := g.wait(1, 30*time.Second)[0]; r.Kind != Failed || r.Tries != 1 || r.Transient {
			t.Errorf("a direct 403: %s after %d tries, transient %v; want failed at once, permanent", r.Kind, r.Tries, r.Transient)
		}
	})
}

// TestDownloader_banText: a 200 ban page (here, the site's answer to
// requests that carry X-Forwarded-For, as a transparent proxy sends) is
// never handed back as the page: the proxy is banned for the host and the
// page goes through another. Fetched directly, a ban page is retried, then
// fails naming the text.
func TestDownloader_banText(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Forwarded-For") != "" || r.URL.Path == "/blocked" {
			html(w, "<h1>Please solve the CAPTCHA</h1>")
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	px := g.seedProxies(false, proxytest.NewTransparent, proxytest.NewHTTP)
	transparent, good := px[0], px[1]
	j := g.job(func(sp *jobspec.Job) {
		sp.Proxy, sp.ObeyRobots, sp.MaxRetries = jobspec.ProxyRequire, false, 2
		sp.BanText = []string{"Access denied", "captcha"}
	})
	g.refusedThrough(t, j, s.URL, transparent, good, "the real page", func(r Result) bool {
		return r.Kind == Fetched && strings.Contains(string(r.Page.Body), "<h1>page</h1>")
	})

	t.Run("direct", func(t *testing.T) {
		g.submit(g.job(func(sp *jobspec.Job) {
			sp.Proxy, sp.ObeyRobots, sp.MaxRetries, sp.BanText = jobspec.ProxyOff, false, 1, []string{"captcha"}
		}), s.URL+"/blocked")
		r := g.wait(1, 30*time.Second)[0]
		if r.Kind != Failed || r.Tries != 2 || !errors.Is(r.Err, ErrBanPage) || !strings.Contains(r.Err.Error(), `"captcha"`) {
			t.Errorf("a direct ban page: %s after %d tries (%v); want failed after 2 tries naming the text", r.Kind, r.Tries, r.Err)
		}
	})
}

// TestDownloader_autoNoUsableProxy: under proxy: auto, a pool whose every
// proxy is banned for the host, or cannot tunnel to an https site, does
// not make the page wait: it goes direct. Under require it waits.
func TestDownloader_autoNoUsableProxy(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>page</h1>") })
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>tls</h1>") }))
	t.Cleanup(tls.Close)
	g := newRig(t, fastOptions())
	px := g.seedProxies(false, proxytest.NewHTTP)[0] // no CONNECT recorded
	pool, err := proxy.NewPool(g.rdb, g.keys, proxy.DefaultPoolOptions())
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(s.URL)
	picked, err := pool.Pick(g.ctx, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Report(g.ctx, picked, proxy.Banned(time.Hour)); err != nil {
		t.Fatal(err)
	}
	auto := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots = jobspec.ProxyAuto, false })
	g.submit(auto, s.URL+"/banned")
	g.submit(auto, tls.URL+"/tunnel")
	g.wait(2, 20*time.Second)
	if r := g.got[s.URL+"/banned"]; r.Kind != Fetched || s.count("/banned") != 1 {
		t.Errorf("auto, the only proxy banned for the host: %s (%v), site saw %d; want fetched directly", r.Kind, r.Err, s.count("/banned"))
	}
	if r := g.got[tls.URL+"/tunnel"]; r.Kind == Cancelled {
		t.Errorf("auto, no proxy able to tunnel: %s; want it sent directly", r.Kind)
	}
	if n := px.Requests(); n != 0 {
		t.Errorf("the proxy relayed %d requests, want none", n)
	}

	require := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots = jobspec.ProxyRequire, false })
	g.submit(require, s.URL+"/waits")
	testenv.Eventually(t, 10*time.Second, "require, the only proxy banned: 1 request waiting for a proxy",
		func() bool { return g.d.waits.len() == 1 })
	if n := s.count("/waits"); n != 0 {
		t.Errorf("require sent the page directly %d times", n)
	}
}

// TestDownloader_proxyWaitCheap: pages that wait for a proxy cost one pick
// per wait for all of them, not one each, and take no place in their
// host's budget; once a proxy is free again they are all fetched.
func TestDownloader_proxyWaitCheap(t *testing.T) {
	const pages = 40
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>page</h1>") })
	opts := fastOptions()
	opts.ProxyWait, opts.MaxProxyWait = 100*time.Millisecond, 100*time.Millisecond // one ask every 100ms
	g := newRig(t, opts)
	px := g.seedProxies(false, proxytest.NewHTTP)[0]
	pool, err := proxy.NewPool(g.rdb, g.keys, proxy.DefaultPoolOptions())
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(s.URL)
	picked, err := pool.Pick(g.ctx, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Report(g.ctx, picked, proxy.Banned(time.Hour)); err != nil {
		t.Fatal(err)
	}
	calls := &scriptCalls{first: map[string]string{
		"pick": g.keys.Proxies().Usable(), "acquire": g.keys.Politeness(0).Hosts()}}
	g.rdb.AddHook(calls)
	j := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots = jobspec.ProxyRequire, false })
	for i := 0; i < pages; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	testenv.Eventually(t, 10*time.Second, "a page asking for a proxy", func() bool { return calls.count("pick") > 0 })
	// The first page learned there is none free; from now on the others
	// wait with it. (Its own slot may have been asked for, once.)
	start, acquires0 := time.Now(), calls.count("acquire")
	for time.Since(start) < time.Second { // ten periods of ProxyWait, watched
		elapsed := time.Since(start)
		picks, acquires := calls.count("pick"), calls.count("acquire")-acquires0
		// The first leases granted (up to the host's cap of 8) each learn
		// there is none; then one pick per ProxyWait for all.
		if limit := jobspec.DefaultPerHostConcurrency + 1 + int(elapsed/opts.ProxyWait); picks > limit {
			t.Fatalf("%d picks in %s for %d waiting pages, want at most 8 and one per %s", picks, elapsed, pages, opts.ProxyWait)
		}
		// The pages that entered the gate before the wait began pass it
		// in a few rounds (each books for the host's free slots: a cap's
		// worth); then the process renews what it holds once per
		// heartbeat (a second at most); the waiting pages add nothing.
		if limit := 3 + pages/jobspec.DefaultPerHostConcurrency + int(elapsed/time.Second); acquires > limit {
			t.Fatalf("waiting pages asked their host's budget %d times in %s, want at most %d (heartbeats)", acquires, elapsed, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := g.rdb.Del(g.ctx, g.keys.Proxies().Ban(hostOf(s.URL))).Err(); err != nil { // the ban is lifted
		t.Fatal(err)
	}
	for _, r := range g.wait(pages, 30*time.Second) {
		if r.Kind != Fetched {
			t.Errorf("%s: %s (%v)", r.Request.URL, r.Kind, r.Err)
		}
	}
	if n := px.Requests(); n != pages {
		t.Errorf("the proxy relayed %d requests, want %d", n, pages)
	}
}

// TestDownloader_robotsWaitForProxy: under proxy: require, a host whose
// robots.txt waits for a proxy (the only one is banned for it) holds back
// no other host: many of its pages waiting for that robots.txt do not keep
// another host's pages from being checked against their own robots.txt
// and fetched.
func TestDownloader_robotsWaitForProxy(t *testing.T) {
	stuck := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>stuck</h1>") })
	other := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html(w, "<h1>other</h1>")
	})
	g := newRig(t, fastOptions())
	g.seedProxies(false, func() (*proxytest.Server, error) { return proxytest.NewHostBan(hostOf(stuck.URL)) })
	pool, err := proxy.NewPool(g.rdb, g.keys, proxy.DefaultPoolOptions())
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(stuck.URL)
	picked, err := pool.Pick(g.ctx, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Report(g.ctx, picked, proxy.Banned(time.Hour)); err != nil {
		t.Fatal(err)
	}
	j := g.job(func(sp *jobspec.Job) { sp.Proxy = jobspec.ProxyRequire })
	stuckCtx, giveUp := context.WithCancel(g.ctx)
	t.Cleanup(giveUp) // ends the robots.txt fetch that waits for a proxy
	for i := 0; i < 100; i++ {
		go g.d.Fetch(stuckCtx, &Request{URL: fmt.Sprintf("%s/p%d", stuck.URL, i), Job: j})
	}
	g.submit(j, elsewhere(other)+"/page") // another host: localhost
	if r := g.wait(1, 15*time.Second)[0]; r.Kind != Fetched {
		t.Errorf("the other host's page: %s (%v), want fetched", r.Kind, r.Err)
	}
	if n := stuck.count("/robots.txt") + stuck.count("/p0"); n != 0 {
		t.Errorf("the stuck host was sent %d requests, want none (require, its proxy banned)", n)
	}
}

// TestDownloader_proxyBusy: under proxy: require, pages whose only proxy is
// at its concurrency cap (1) ask again after ProxyBusyWait, not after
// ProxyWait doubling: a slot frees as soon as a request through the proxy
// ends. With a ProxyWait of a minute, the pages finish only if busy waits
// are short.
func TestDownloader_proxyBusy(t *testing.T) {
	const pages = 12
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		html(w, "<h1>page</h1>")
	})
	opts := fastOptions()
	opts.ProxyWait, opts.MaxProxyWait, opts.ProxyBusyWait = time.Minute, time.Minute, 20*time.Millisecond
	g := newRig(t, opts)
	px := g.seedProxies(false, proxytest.NewHTTP)[0]
	p, err := proxy.Parse(px.Line())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.rdb.HSet(g.ctx, g.keys.Proxies().Caps(), string(p.ID()), 1).Err(); err != nil {
		t.Fatal(err)
	}
	j := g.job(func(sp *jobspec.Job) { sp.Proxy, sp.ObeyRobots = jobspec.ProxyRequire, false })
	for i := 0; i < pages; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	for _, r := range g.wait(pages, 45*time.Second) {
		if r.Kind != Fetched {
			t.Errorf("%s: %s (%v)", r.Request.URL, r.Kind, r.Err)
		}
	}
	if n := px.Requests(); n != pages {
		t.Errorf("the proxy relayed %d requests, want %d", n, pages)
	}
}

// refusedThrough submits 20 pages of base under j, whose proxies are bad
// (the site refuses what comes through it: a 403, a ban page) and good,
// and fails the test unless every page ends as ok says (want says it in
// words), bad was picked, each refusal through bad cost its page one
// retry, and bad alone is banned for the site.
func (g *rig) refusedThrough(t *testing.T, j *Job, base string, bad, good *proxytest.Server, want string, ok func(Result) bool) {
	t.Helper()
	for i := 0; i < 20; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", base, i))
	}
	retries := 0
	for _, r := range g.wait(20, 30*time.Second) {
		if !ok(r.Result) {
			t.Errorf("%s: %s after %d tries (%v); want %s", r.Request.URL, r.Kind, r.Tries, r.Err, want)
		}
		retries += r.Tries - 1
	}
	if bad.Requests() == 0 {
		t.Fatal("the refused proxy was never picked: the test proved nothing")
	}
	if int64(retries) != bad.Requests() {
		t.Errorf("%d retries for %d refusals through the refused proxy, want one each", retries, bad.Requests())
	}
	host := hostOf(base)
	if !g.banned(bad, host) || g.banned(good, host) {
		t.Errorf("bans for the site: refused proxy %v, good proxy %v; want the refused one alone", g.banned(bad, host), g.banned(good, host))
	}
}
