package bench

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/internal/demosite"
)

func TestLoopbackHost(t *testing.T) {
	for i, want := range map[int]string{0: "127.0.0.2", 252: "127.0.0.254", 253: "127.0.1.1", 506: "127.0.1.254",
		507: "127.0.2.1", 1999: "127.0.7.223"} {
		if got := loopbackHost(i); got != want {
			t.Errorf("loopbackHost(%d) = %s, want %s", i, got, want)
		}
	}
	seen := map[string]bool{}
	for i := range MaxManyHosts {
		h := loopbackHost(i)
		ip := net.ParseIP(h).To4()
		if ip == nil || ip[0] != 127 || ip[3] == 0 || ip[3] == 255 || h == "127.0.0.1" || seen[h] {
			t.Fatalf("loopbackHost(%d) = %s: not a fresh loopback host", i, h)
		}
		seen[h] = true
	}
}

// TestServeManySites serves 2,000 sites, each on an address of its own:
// the first and the last answer their robots.txt and loop, and the view
// counts each request on its host.
func TestServeManySites(t *testing.T) {
	sites, err := serveManySites(2000, demosite.Options{Details: 10, GoneEvery: -1, FlakyEvery: -1, RedirectLoop: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sites.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, i := range []int{0, 1999} {
		for _, path := range []string{"/robots.txt", "/loop/1", "/list/1"} {
			resp, err := noFollow.Get(sites.bases[i] + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode >= 400 {
				t.Errorf("%s%s answers %d", sites.bases[i], path, resp.StatusCode)
			}
		}
	}
	v := sites.view()
	if len(v.Hosts) != 2000 || v.Requests() != 6 || v.LoopHops() != 2 || v.Hosts[1999].Host != "127.0.7.223" ||
		v.Hosts[1999].Requests != 3 || v.Hosts[1].Requests != 0 {
		t.Errorf("view: %d hosts, %d requests, %d hops; the last %+v", len(v.Hosts), v.Requests(), v.LoopHops(), v.Hosts[1999])
	}
	if len(sites.expectedURLs()) != 2000*10 {
		t.Errorf("%d expected pages, want 20000", len(sites.expectedURLs()))
	}
}

func TestCountItems(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("slave-0.jsonl", `{"url":"http://127.0.0.2:80/detail/1?cat=tech&lang=en"}`,
		`{"url":"http://127.0.0.2:80/detail/2?cat=sport&lang=en"}`)
	write("slave-1.jsonl", `{"url":"http://127.0.0.2:80/detail/1?cat=tech&lang=en"}`, `{"url":"http://127.0.0.3:80/other"}`)
	write("slave-1.failed.jsonl", `{"url":"http://127.0.0.2:80/loop/1","reason":"fetch http://127.0.0.2:80/loop/1: too many redirects"}`,
		`{"url":"http://127.0.0.3:80/loop/1","reason":"fetch http://127.0.0.3:80/loop/1: too many redirects"}`,
		`{"url":"http://127.0.0.3:80/detail/10","reason":"404"}`)
	write("slave-1.log", "not JSON")
	expected := map[string]bool{"127.0.0.2:80/detail/1?cat=tech&lang=en": true, "127.0.0.2:80/detail/2?cat=sport&lang=en": true,
		"127.0.0.2:80/detail/3?cat=arts&lang=en": true}
	c, err := countItems(dir, expected)
	if err != nil {
		t.Fatal(err)
	}
	if c.Expected != 3 || c.Stored != 2 || c.Records != 4 || c.Duplicates != 1 || c.Unexpected != 1 || c.Failures != 3 ||
		c.LoopFailures["fetch URL: too many redirects"] != 2 || c.ExactlyOnce() {
		t.Errorf("countItems = %+v", c)
	}
	if got := storedOnce(c); got != "2/3 (1 duplicates, 1 unexpected)" {
		t.Errorf("storedOnce = %q", got)
	}
	if got := grouped(1234567); got != "1,234,567" {
		t.Errorf("grouped = %q", got)
	}
}
