package master

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestJobRunner_bigSitemap (issue 29, item 8): a sitemap longer than the
// master reads (200 MB uncompressed, streamed; the master's limit set to
// 1 MiB here, 50 MiB by default) is read up to the limit: the pages it
// lists there are routed, it counts as a sitemap read, not failed, and
// the entry is committed.
func TestJobRunner_bigSitemap(t *testing.T) {
	const pages = 500
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		testenv.StreamSitemap(w, r.Host, pages, 200<<20)
	}))
	t.Cleanup(srv.Close)
	rdb, keys := testenv.Redis(t)
	opts := DefaultOptions()
	opts.SitemapMaxBytes = 1 << 20
	f := newFixtureOn(t, rdb, keys, opts)
	f.submitSpec(t, func(s *jobspec.Job) {
		s.Sitemaps = []jobspec.SitemapRule{{URL: srv.URL + "/sitemap.xml", Kind: jobspec.KindDetail}}
	}, srv.URL+"/list")
	r := f.runner(t, 0, 1)
	f.startRound(t, r)
	f.runDownloader(t)
	entries := int(f.rdb.LLen(f.ctx, f.jk.Frontier()).Val())
	f.processEntries(t, r, entries, func(p cluster.ListPage) bool { return p.Sitemap > 0 })
	if n := f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val(); n != int64(entries-1) {
		t.Errorf("%d entries in progress, want only the list seed (the sitemaps entry committed)", n)
	}
	stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
	for field, want := range map[string]string{cluster.StatSitemaps: "1", cluster.StatSitemapsFailed: "",
		cluster.StatSitemapURLs: fmt.Sprint(pages), cluster.StatRouted: fmt.Sprint(pages)} {
		if stats[field] != want && !(want == "" && stats[field] == "0") {
			t.Errorf("stats[%s] = %q, want %q (stats %v)", field, stats[field], want, stats)
		}
	}
}
