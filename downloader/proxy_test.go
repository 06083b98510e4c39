package downloader

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
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
	j := g.job(func(sp *cluster.JobSpec) { sp.Proxy = cluster.ProxyRequire })
	g.submit(j, s.URL+"/page")
	time.Sleep(500 * time.Millisecond)
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
	j := g.job(func(sp *cluster.JobSpec) { sp.Proxy, sp.ObeyRobots, sp.MaxRetries = cluster.ProxyRequire, false, 0 })
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
