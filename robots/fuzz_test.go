package robots

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/jimsmart/grobotstxt"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// FuzzParse feeds any body and path to the parser and to Check:
//
//	go test -run='^$' -fuzz=FuzzParse -fuzztime=20s ./robots/
//
// Nothing panics, Check never fails on a body, and File answers as
// grobotstxt's own matcher (Google's algorithm) does on the same file.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ body, path string }{
		{"User-agent: *\nDisallow: /private\n", "private/x"},
		{"User-agent: *\nDisallow: /page\nAllow: /page\n", "page"},
		{"User-agent: crawler\nAllow: /a$\nDisallow: /*.php\nCrawl-delay: 3\n", "a.php?x=1"},
		{"user-agent: * junk\ndisallow /x\n\n\nUser-agent: crawler\nUser-agent: b\nDisallow: /%e2%82%ac\n", "%E2%82%AC"},
		{"\xef\xbb\xbfUser-agent: *\r\nDisallow: /caf\xc3\xa9\r\nAllow: /d/index.html\n", "d/"},
		{"Disallow: /\nUser-agent: *\nCrawl-delay: 1e309\nAllow: *\nDisallow: /**$$\n", "$"},
	} {
		f.Add([]byte(seed.body), seed.path)
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(mr.Close)
	var origins atomic.Int64
	body := make(map[string][]byte)
	get := func(_ context.Context, u string) (Response, error) {
		return Response{Status: 200, Body: body[u]}, nil
	}
	opts := DefaultOptions()
	opts.Keys = cluster.Keys{Prefix: "fuzz"}
	c, err := New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), get, opts, nil)
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, robots []byte, rawPath string) {
		u, err := url.Parse("http://h.test/" + rawPath)
		if err != nil {
			t.Skip()
		}
		path := PathOf(u)
		file := Parse(robots)
		got := file.Allowed("crawler", path)
		want := grobotstxt.AgentAllowed(string(upperEscapes(truncate(robots))), "crawler", "http://h.test"+path)
		if got != want {
			t.Errorf("Allowed(%q) = %v, grobotstxt says %v", path, got, want)
		}
		_ = file.CrawlDelay("crawler")

		origin := fmt.Sprintf("http://f%d.test", origins.Add(1)) // one fetch each
		body[origin+"/robots.txt"] = robots
		defer delete(body, origin+"/robots.txt")
		defer mr.Del(opts.Keys.Robots(origin).File())
		d, err := c.Check(context.Background(), origin+path, ua)
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if d.Allowed != got || d.Temporary {
			t.Errorf("Check = %+v, File.Allowed = %v", d, got)
		}
	})
}
