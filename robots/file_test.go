package robots

import (
	"context"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestCache_File: the file is fetched once for Check and File alike, File
// gives its status and body, a 404 its status, and a file that cannot
// be had no copy.
func TestCache_File(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	body := "User-agent: *\nDisallow: /private\nSitemap: https://example.com/sitemap.xml\n"
	s := newSite(t, 200, body)
	c := newCache(t, rdb, keys, nil)
	check(t, c, s.URL+"/a")
	status, got, ok, err := c.File(ctx, s.URL+"/robots.txt")
	if err != nil || !ok || status != 200 || string(got) != body {
		t.Errorf("File = %d, %q, %v, %v; want 200 and the body", status, got, ok, err)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times for a Check and a File, want once", n)
	}
	missing := newSite(t, 404, "")
	if status, _, ok, err := c.File(ctx, missing.URL+"/robots.txt"); err != nil || !ok || status != 404 {
		t.Errorf("File of a 404 = %d, %v, %v; want 404", status, ok, err)
	}
	down := newSite(t, 503, "")
	if _, _, ok, err := c.File(ctx, down.URL+"/robots.txt"); err != nil || ok {
		t.Errorf("File of a 503 = %v, %v; want no copy", ok, err)
	}
	if _, _, _, err := c.File(ctx, "ftp://example.com/robots.txt"); err == nil {
		t.Error("File of an ftp URL: no error")
	}
}
