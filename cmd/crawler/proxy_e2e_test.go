package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// proxyCrawl is a crawl whose job requires proxies, with the proxies the
// test started and the site's own request count.
type proxyCrawl struct {
	env     clusterEnv
	site    *demosite.Site
	base    string
	log     *requestLog
	source  string
	proxies []*proxytest.Server
}

func newProxyCrawl(t *testing.T, opts demosite.Options, proxies int) *proxyCrawl {
	t.Helper()
	c := &proxyCrawl{env: newClusterEnv(t), site: demosite.New(opts), log: &requestLog{}}
	srv := httptest.NewServer(c.log.wrap(c.site))
	t.Cleanup(srv.Close)
	c.base = srv.URL
	lines := []string{"# proxies for the test"}
	for i := 0; i < proxies; i++ {
		lines = append(lines, c.addProxy(t))
	}
	c.source = filepath.Join(t.TempDir(), "proxies.txt")
	if err := os.WriteFile(c.source, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.env.masterArgs = []string{"--proxy-source", c.source, "--proxy-refill", "500ms", "--proxy-min", "10"}
	return c
}

// addProxy starts a healthy forward proxy and returns its source line.
func (c *proxyCrawl) addProxy(t *testing.T) string {
	t.Helper()
	p, err := proxytest.NewHTTP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	c.proxies = append(c.proxies, p)
	return p.Line()
}

// submit writes the job, requiring proxies, and submits it.
func (c *proxyCrawl) submit(t *testing.T) {
	t.Helper()
	job := demosite.JobYAML("proxied", c.base) + "proxy: require\n"
	path := filepath.Join(t.TempDir(), "proxied.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	c.env.submit(t, "proxied", path)
}

// listedProxy is a proxy as client proxies --json lists it.
type listedProxy struct {
	Proxy string      `json:"proxy"`
	State proxy.State `json:"state"`
}

// listing reads the pool with client proxies --all --json.
func (c *proxyCrawl) listing(t *testing.T) (proxy.Listing, []listedProxy) {
	t.Helper()
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "proxies", "--all", "--json"}, c.env.flags()...)...)
	if err != nil {
		t.Fatalf("client proxies: %v: %s", err, errOut)
	}
	var l struct {
		proxy.Listing
		Proxies []listedProxy `json:"proxies"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("client proxies --json: %v\n%s", err, out)
	}
	return l.Listing, l.Proxies
}

// relayed is how many requests the test's proxies carried.
func (c *proxyCrawl) relayed() int64 {
	var n int64
	for _, p := range c.proxies {
		n += p.Requests()
	}
	return n
}

// siteRequests is every request the site answered, robots.txt included.
func (c *proxyCrawl) siteRequests() int64 {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	return int64(len(c.log.starts) + c.log.robots)
}

// TestProxy_KillProxy (issue 10): a job that requires proxies goes through
// the pool; a healthy proxy killed mid-crawl is evicted, the crawl
// completes through the others with every page stored once, and the site
// never saw a request that did not come through a proxy.
func TestProxy_KillProxy(t *testing.T) {
	c := newProxyCrawl(t, faultSite, 3)
	c.env.startMaster(t, "master")
	for id := 0; id < 3; id++ {
		c.env.startSlave(t, id)
	}
	c.env.waitSlaves(t, 0, 1, 2)
	eventually(t, time.Minute, "3 usable proxies", func() bool { l, _ := c.listing(t); return l.Usable == 3 })
	c.submit(t)
	c.env.waitProgress(t, "proxied", "400 pages stored", func(k client.Counters) bool { return k.Stored >= 400 })
	killed := c.proxies[1]
	killed.Close() // as kill -9: connections dropped, the port refuses
	st := c.env.wait(t, "proxied", 3*time.Minute)
	checkCrawl(t, c.site, c.base, st, c.env.results(t, "proxied"), c.env.failedURLs(t, "proxied"))
	if relayed, direct := c.relayed(), c.siteRequests(); relayed < direct {
		t.Errorf("the site answered %d requests, the proxies relayed %d: some went direct", direct, relayed)
	}
	l, entries := c.listing(t)
	if l.Usable != 2 {
		t.Errorf("%d usable proxies after one was killed, want 2", l.Usable)
	}
	for _, e := range entries {
		if e.Proxy == killed.Line() && e.State == proxy.StateUsable {
			t.Errorf("the killed proxy %s is still usable", e.Proxy)
		}
	}
}

// TestProxy_RequireWaits (issue 10): with proxy: require and an empty pool
// the job waits (nothing fetched, nothing failed, nothing lost); once a
// proxy is added to the source file it is validated, and the crawl
// finishes through it.
func TestProxy_RequireWaits(t *testing.T) {
	c := newProxyCrawl(t, demosite.Options{Details: 200}, 0)
	c.env.startMaster(t, "master")
	c.env.startSlave(t, 0)
	c.env.waitSlaves(t, 0)
	c.submit(t)
	time.Sleep(3 * time.Second)
	st, err := client.GetStatus(t.Context(), c.env.rdb, c.env.keys, "proxied", 64)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.siteRequests(); n != 0 || st.Counters.Failed+st.Counters.ListFailed != 0 || st.State == "finished" {
		t.Fatalf("with no proxy: %d requests at the site, %d failed, state %s; want it waiting untouched",
			n, st.Counters.Failed+st.Counters.ListFailed, st.State)
	}
	line := c.addProxy(t)
	f, err := os.OpenFile(c.source, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
	st2 := c.env.wait(t, "proxied", 2*time.Minute)
	checkCrawl(t, c.site, c.base, st2, c.env.results(t, "proxied"), c.env.failedURLs(t, "proxied"))
	if relayed, direct := c.relayed(), c.siteRequests(); relayed < direct {
		t.Errorf("the site answered %d requests, the proxy relayed %d: some went direct", direct, relayed)
	}
}
