package main

import (
	"context"
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
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/proxy"
)

// proxyCrawl is a crawl whose job requires proxies, with the proxy
// processes the test started and the site's own count of who relayed
// each request.
type proxyCrawl struct {
	env     clusterEnv
	site    *demosite.Site
	base    string
	via     *viaCount
	source  string
	proxies []*proxyProc
}

func newProxyCrawl(t *testing.T, opts demosite.Options, proxies int) *proxyCrawl {
	t.Helper()
	c := &proxyCrawl{env: newClusterEnv(t), site: demosite.New(opts), via: &viaCount{}}
	srv := httptest.NewServer(c.via.wrap(c.site))
	t.Cleanup(srv.Close)
	c.base = srv.URL
	lines := []string{"# proxies for the test"}
	for range proxies {
		lines = append(lines, c.addProxy(t).line)
	}
	c.source = filepath.Join(t.TempDir(), "proxies.txt")
	if err := os.WriteFile(c.source, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.env.masterArgs = []string{"--proxy-source", c.source, "--proxy-refill", "500ms", "--proxy-min", "10"}
	return c
}

// addProxy starts a healthy forward proxy as a process of its own.
func (c *proxyCrawl) addProxy(t *testing.T) *proxyProc {
	t.Helper()
	p := startProxyProc(t)
	c.proxies = append(c.proxies, p)
	return p
}

// appendSource adds a line to the proxy source file, as an operator would.
func (c *proxyCrawl) appendSource(t *testing.T, line string) {
	t.Helper()
	f, err := os.OpenFile(c.source, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, line); err != nil {
		t.Fatal(err)
	}
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

// usable counts the pool's usable proxies, straight from Redis.
func (c *proxyCrawl) usable(t *testing.T) int64 {
	t.Helper()
	pool, err := proxy.NewPool(c.env.rdb, c.env.keys, proxy.DefaultPoolOptions())
	if err != nil {
		t.Fatal(err)
	}
	n, err := pool.Size(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// status reads the job's status.
func (c *proxyCrawl) status(t *testing.T) *client.Status {
	t.Helper()
	st, err := jobStatus(context.Background(), c.env.rdb, c.env.keys, "proxied")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkNoneDirect checks that every request the site answered came
// through one of the test's proxies.
func (c *proxyCrawl) checkNoneDirect(t *testing.T) {
	t.Helper()
	relayed, direct := c.via.counts(c.proxies...)
	if direct != 0 || sum(relayed) != c.via.total() {
		t.Errorf("the site answered %d requests: %d relayed by the test's proxies (%v), %d direct; want none direct",
			c.via.total(), sum(relayed), relayed, direct)
	}
}

// TestProxy_KillProxy (issue 10): a job that requires proxies goes through
// the pool of three proxy processes; one killed with SIGKILL mid-crawl is
// evicted, the crawl completes through the other two with every page
// stored once, and the site never answered a request that did not come
// through a proxy.
func TestProxy_KillProxy(t *testing.T) {
	t.Parallel()
	c := newProxyCrawl(t, faultSite, 3)
	c.env.startMaster(t, "master")
	for id := range 3 {
		c.env.startSlave(t, id)
	}
	c.env.waitSlaves(t, 0, 1, 2)
	testenv.Eventually(t, time.Minute, "3 usable proxies", func() bool { return c.usable(t) == 3 })
	c.submit(t)
	c.env.waitProgress(t, "proxied", "400 pages stored", func(k client.Counters) bool { return k.Stored >= 400 })
	killed, others := c.proxies[1], []*proxyProc{c.proxies[0], c.proxies[2]}
	killed.kill(t)
	before, _ := c.via.counts(others...)

	st := c.env.wait(t, "proxied", 3*time.Minute)
	checkCrawl(t, c.site, c.base, st, c.env.results(t, "proxied"), c.env.failedURLs(t, "proxied"))
	c.checkNoneDirect(t)
	if after, _ := c.via.counts(others...); sum(after) <= sum(before) {
		t.Errorf("the surviving proxies relayed %v before the kill and %v at the end: the crawl did not go on through them",
			before, after)
	}
	l, entries := c.listing(t)
	if l.Usable != 2 {
		t.Errorf("%d usable proxies after one was killed, want 2", l.Usable)
	}
	for _, e := range entries {
		if e.Proxy == killed.line && e.State == proxy.StateUsable {
			t.Errorf("the killed proxy %s is still usable", e.Proxy)
		}
	}
}

// TestProxy_RequireWaits (issue 10): with proxy: require, the pool's only
// proxy is killed with SIGKILL mid-crawl. The pool empties, and the job
// waits, at the master and at the slaves alike: over a window of seconds
// nothing reaches the site and nothing is failed, stored or lost. Once a
// proxy is added to the source file it is validated, and the crawl
// finishes through it with every page stored once.
func TestProxy_RequireWaits(t *testing.T) {
	t.Parallel()
	site := faultSite
	site.Details = 300 // one proxy carries the rest: 8 requests in flight at most
	c := newProxyCrawl(t, site, 1)
	c.env.startMaster(t, "master")
	for id := range 2 {
		c.env.startSlave(t, id)
	}
	c.env.waitSlaves(t, 0, 1)
	testenv.Eventually(t, time.Minute, "1 usable proxy", func() bool { return c.usable(t) == 1 })
	c.submit(t)
	c.env.waitProgress(t, "proxied", "60 pages stored", func(k client.Counters) bool { return k.Stored >= 60 })
	c.proxies[0].kill(t)
	k := c.status(t).Counters
	t.Logf("killed the only proxy with %d pages stored, %d queued, %d in flight", k.Stored, k.Queued, k.InFlight)
	testenv.Eventually(t, time.Minute, "the pool empty", func() bool { return c.usable(t) == 0 })

	answered, k0 := c.via.total(), c.status(t).Counters // gone pages fetched before may have failed
	holds(t, 3*time.Second, "with the pool empty", func() error {
		st := c.status(t)
		k := st.Counters
		switch {
		case c.via.total() != answered:
			return fmt.Errorf("the site answered %d requests, %d when the pool emptied", c.via.total(), answered)
		case k.Failed != k0.Failed || k.ListFailed != k0.ListFailed || k.DeadLetters != k0.DeadLetters:
			return fmt.Errorf("failed %d, list pages failed %d, dead letters %d; %d, %d and %d when the pool emptied",
				k.Failed, k.ListFailed, k.DeadLetters, k0.Failed, k0.ListFailed, k0.DeadLetters)
		case st.State == "finished" || k.Queued+k.InFlight == 0:
			return fmt.Errorf("job %s, counters %+v: want detail tasks waiting at the slaves", st.State, k)
		}
		return nil
	})

	added := c.addProxy(t)
	c.appendSource(t, added.line)
	testenv.Eventually(t, time.Minute, "the added proxy usable", func() bool { return c.usable(t) == 1 })
	st := c.env.wait(t, "proxied", 3*time.Minute)
	checkCrawl(t, c.site, c.base, st, c.env.results(t, "proxied"), c.env.failedURLs(t, "proxied"))
	c.checkNoneDirect(t)
	if relayed, _ := c.via.counts(added); relayed[0] == 0 {
		t.Errorf("the added proxy relayed nothing")
	}
}

// TestProxy_ListEmptyJSON: client proxies --json on an empty pool prints
// "proxies": [], not null.
func TestProxy_ListEmptyJSON(t *testing.T) {
	t.Parallel()
	_, keys := testenv.Redis(t)
	out, errOut, err := crawler(t, time.Minute, "client", "proxies", "--json", "--redis", testenv.RedisURL(),
		"--prefix", keys.Prefix)
	if err != nil {
		t.Fatalf("client proxies: %v: %s", err, errOut)
	}
	var l map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if string(l["proxies"]) != "[]" {
		t.Errorf(`client proxies --json: "proxies": %s, want []`, l["proxies"])
	}
}
