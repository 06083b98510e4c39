// Command colly is the one-site benchmark's peer: the crawl a user would
// write with colly v2 for the demo site, Async with a Parallelism per
// domain, colly's own robots.txt handling, and retries of transient
// failures (5xx, 429, a failed connection) as our job's max_retries. It
// walks the list pages from the seed, stores every detail page's fields
// to a JSON Lines file and prints its counts as one JSON object.
//
// It is a module of its own, so that colly never becomes a dependency
// of the crawler; the benchmark builds it at run time.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocolly/colly/v2"
)

// counts are what the crawl did, printed at the end.
type counts struct {
	Stored    int64 `json:"stored"`
	Failed    int64 `json:"failed"`
	ListPages int64 `json:"list_pages"`
	Requests  int64 `json:"requests"`
	Retries   int64 `json:"retries"`
}

func main() {
	seed := flag.String("seed", "", "first list page")
	parallelism := flag.Int("parallelism", 16, "requests in flight per domain")
	retries := flag.Int("retries", 2, "retries of a transient failure")
	out := flag.String("o", "items.jsonl", "items file")
	flag.Parse()
	if err := crawl(*seed, *parallelism, *retries, *out); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
}

func crawl(seed string, parallelism, retries int, out string) error {
	u, err := url.Parse(seed)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-seed %q is not an absolute URL", seed)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	items := &itemWriter{w: bufio.NewWriter(f)}
	c := colly.NewCollector(colly.Async(true), colly.AllowedDomains(u.Hostname()))
	c.IgnoreRobotsTxt = false
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: parallelism}); err != nil {
		return err
	}
	var n counts
	c.OnRequest(func(*colly.Request) { atomic.AddInt64(&n.Requests, 1) })
	c.OnHTML("a.next[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(canonical(e.Request.AbsoluteURL(e.Attr("href")))) })
	c.OnHTML(".item a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(canonical(e.Request.AbsoluteURL(e.Attr("href")))) })
	c.OnHTML("html", func(e *colly.HTMLElement) {
		if strings.HasPrefix(e.Request.URL.Path, "/list/") {
			atomic.AddInt64(&n.ListPages, 1)
			return
		}
		if items.store(e) {
			atomic.AddInt64(&n.Stored, 1)
		}
	})
	c.OnError(func(r *colly.Response, err error) {
		// A page's requests share its parent's Ctx: count tries by URL.
		key := "tries " + r.Request.URL.String()
		tries, _ := r.Request.Ctx.GetAny(key).(int)
		if transient(r.StatusCode) && tries < retries {
			r.Request.Ctx.Put(key, tries+1)
			atomic.AddInt64(&n.Retries, 1)
			if r.Request.Retry() == nil {
				return
			}
		}
		atomic.AddInt64(&n.Failed, 1)
	})
	if err := c.Visit(seed); err != nil {
		return err
	}
	c.Wait()
	if err := items.flush(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(n)
}

// transient reports whether a failure is worth a retry: no answer at all
// (status 0), a 5xx, 408 or 429.
func transient(status int) bool {
	return status == 0 || status >= 500 || status == 429 || status == 408
}

// canonical spells a URL one way (host in lower case, query sorted, no
// fragment), so that colly's visited set sees one page once however the
// site spells its links.
func canonical(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host, u.Fragment, u.RawQuery = strings.ToLower(u.Host), "", u.Query().Encode()
	return u.String()
}

// itemWriter writes detail pages' fields as JSON Lines.
type itemWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// store writes the page's fields, if it is an article (it has a title).
func (iw *itemWriter) store(e *colly.HTMLElement) bool {
	title := e.ChildText("h1")
	if title == "" {
		return false
	}
	item := map[string]any{"url": e.Request.URL.String(), "fields": map[string]any{
		"title": title, "body": e.ChildText("#content"), "tags": e.ChildTexts(".tag"),
		"image": e.ChildAttr("img.main", "src")}}
	line, _ := json.Marshal(item)
	iw.mu.Lock()
	defer iw.mu.Unlock()
	_, _ = iw.w.Write(append(line, '\n'))
	return true
}

func (iw *itemWriter) flush() error {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	return iw.w.Flush()
}
