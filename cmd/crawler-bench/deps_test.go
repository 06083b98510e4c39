package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCrawler_holdsNoBenchOrTestCode lists what the crawler binary is
// built from: no benchmark, no test helper, and none of the libraries
// only they use (goproxy and go-socks5, the loopback proxies of proxytest).
func TestCrawler_holdsNoBenchOrTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../crawler").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ../crawler: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"/cmd/crawler-bench", "/proxytest", "/internal/testenv", "goproxy", "go-socks5", "gocolly"} {
			if strings.Contains(pkg, banned) {
				t.Errorf("the crawler binary is built with %s", pkg)
			}
		}
	}
}

// TestCrawlerBinary: --crawler names the executable the benchmarks start,
// and a wrong one is an error naming the flag.
func TestCrawlerBinary(t *testing.T) {
	defer func(old string) { crawlerFlag = old }(crawlerFlag)
	crawlerFlag = "/nonexistent/crawler"
	if _, err := crawlerBinary(); err == nil || !strings.HasPrefix(err.Error(), "--crawler: ") {
		t.Errorf("crawlerBinary with --crawler %s: %v, want an error naming --crawler", crawlerFlag, err)
	}
	crawlerFlag = "sh"
	if exe, err := crawlerBinary(); err != nil || !strings.HasSuffix(exe, "/sh") {
		t.Errorf("crawlerBinary with --crawler sh = %q, %v; want sh's path", exe, err)
	}
}
