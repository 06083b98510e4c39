package sitemap

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func locs(f *File) []string {
	var out []string
	for _, e := range f.Entries {
		out = append(out, e.Loc)
	}
	return out
}

// TestParse: a urlset with the extensions real sitemaps carry, an index,
// a text sitemap, each also gzipped.
func TestParse(t *testing.T) {
	wantURLs := []string{"https://shop.example/p/1", "https://shop.example/p/2?color=red&size=xl",
		"https://shop.example/p/3", "/p/4", "https://shop.example/about", "ftp://shop.example/p/5"}
	for _, tc := range []struct {
		file  string
		index bool
		want  []string
	}{
		{"urlset.xml", false, wantURLs},
		{"index.xml", true, []string{"https://shop.example/sitemap-products.xml.gz", "https://shop.example/sitemap-pages.xml"}},
		{"urls.txt", false, []string{"https://shop.example/p/1", "https://shop.example/p/2"}},
	} {
		for _, zip := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s gzip=%v", tc.file, zip), func(t *testing.T) {
				body := readFile(t, tc.file)
				if zip {
					body = gzipped(t, body)
				}
				f, err := Parse(context.Background(), body)
				if err != nil {
					t.Fatal(err)
				}
				if f.Index != tc.index || f.Truncated || !reflect.DeepEqual(locs(f), tc.want) {
					t.Errorf("Parse = index %v, truncated %v, %q; want index %v, %q", f.Index, f.Truncated, locs(f), tc.index, tc.want)
				}
			})
		}
	}
	f, err := Parse(context.Background(), readFile(t, "urlset.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Entries[0].LastMod; !got.Equal(time.Date(2024, 3, 5, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("lastmod of p/1 = %v", got)
	}
	if got := f.Entries[1].LastMod; !got.Equal(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("lastmod of p/2 = %v", got)
	}
	if !f.Entries[2].LastMod.IsZero() {
		t.Errorf("lastmod 'last tuesday' = %v, want zero", f.Entries[2].LastMod)
	}
}

func TestParse_notSitemaps(t *testing.T) {
	for name, body := range map[string]string{
		"html":      "<!DOCTYPE html><html><body>Not found</body></html>",
		"rss":       `<?xml version="1.0"?><rss><channel><item><link>https://x/</link></item></channel></rss>`,
		"text":      "User-agent: *\nDisallow: /\n",
		"bad gzip":  "\x1f\x8b\x08\x00garbage",
		"empty xml": "<?xml version=\"1.0\"?>",
	} {
		if f, err := Parse(context.Background(), []byte(body)); err == nil {
			t.Errorf("%s: Parse = %+v, want an error", name, f)
		}
	}
}

// TestParse_limits: a file stops at its count of URLs and at its size
// unzipped, keeping what came before, so a gzip bomb costs its size limit
// of reading and no more memory than the entries. (Parse's limits are the
// protocol's, 50,000 URLs and 50 MiB; the test uses smaller ones.)
func TestParse_limits(t *testing.T) {
	lim := limits{urls: 500, bytes: 1 << 20}
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range lim.urls + 10 {
		fmt.Fprintf(&b, "<url><loc>https://shop.example/p/%d</loc></url>\n", i)
	}
	b.WriteString("</urlset>")
	f, err := parse(context.Background(), []byte(b.String()), lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != lim.urls || !f.Truncated {
		t.Errorf("%d entries, truncated %v; want %d, true", len(f.Entries), f.Truncated, lim.urls)
	}

	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	io.WriteString(zw, `<urlset><url><loc>https://shop.example/p/1</loc></url><!--`)
	pad := bytes.Repeat([]byte(" "), 1<<10)
	for range 2 << 10 {
		zw.Write(pad)
	}
	io.WriteString(zw, `--><url><loc>https://shop.example/p/2</loc></url></urlset>`)
	zw.Close()
	f, err = parse(context.Background(), bomb.Bytes(), lim)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(locs(f), []string{"https://shop.example/p/1"}) || !f.Truncated {
		t.Errorf("a 2 MiB file: %q, truncated %v; want the first URL and truncated", locs(f), f.Truncated)
	}
}

// shop is a real HTTP server with a robots.txt naming a sitemap index,
// whose parts are a gzip file (served as application/gzip), a plain
// sitemap, a missing one, and an index that lists the first index again.
func shop(t *testing.T) (*httptest.Server, *sync.Map) {
	t.Helper()
	var hits sync.Map
	var base string
	files := map[string]func() []byte{
		"/robots.txt": func() []byte {
			return []byte("User-agent: *\nDisallow: /cart\nSitemap: " + base + "/sitemap.xml\nSitemap: " + base + "/sitemap.xml\n")
		},
		"/sitemap.xml": func() []byte {
			return []byte(`<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
				<sitemap><loc>` + base + `/sitemap-products.xml.gz</loc></sitemap>
				<sitemap><loc>/sitemap-pages.xml</loc></sitemap>
				<sitemap><loc>` + base + `/sitemap-gone.xml</loc></sitemap>
				<sitemap><loc>` + base + `/sitemap-more.xml</loc></sitemap></sitemapindex>`)
		},
		"/sitemap-products.xml.gz": func() []byte {
			return gzipped(t, []byte(`<urlset><url><loc>`+base+`/p/1</loc><lastmod>2024-03-05</lastmod></url>
				<url><loc>`+base+`/p/2</loc></url><url><loc>`+base+`/p/2?print=1</loc></url></urlset>`))
		},
		"/sitemap-pages.xml": func() []byte {
			return []byte(`<urlset><url><loc>` + base + `/about</loc></url><url><loc>` + base + `/p/3</loc></url></urlset>`)
		},
		"/sitemap-more.xml": func() []byte {
			return []byte(`<sitemapindex><sitemap><loc>` + base + `/sitemap.xml</loc></sitemap>
				<sitemap><loc>` + base + `/sitemap-deep.xml</loc></sitemap></sitemapindex>`)
		},
		"/sitemap-deep.xml": func() []byte {
			return []byte(`<sitemapindex><sitemap><loc>` + base + `/sitemap-deeper.xml</loc></sitemap></sitemapindex>`)
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(int))
		*n.(*int)++
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".gz") {
			w.Header().Set("Content-Type", "application/gzip")
		}
		w.Write(f())
	}))
	base = srv.URL
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestWalker_robots: url: robots finds the index through robots.txt; the
// walk reads the gzip part and the plain part, counts the missing one,
// fetches each sitemap once in spite of the cycle, stops at the depth
// limit, and filters page URLs (not sitemaps) by allow and deny.
func TestWalker_robots(t *testing.T) {
	srv, hits := shop(t)
	ctx := context.Background()
	rule := jobspec.SitemapRule{URL: jobspec.SitemapsFromRobots, Kind: "product", Allow: "/p/", Deny: `print=`}
	roots, err := Roots(ctx, rule, testenv.Get, []string{srv.URL + "/", srv.URL + "/c/1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{srv.URL + "/sitemap.xml"}; !reflect.DeepEqual(roots, want) {
		t.Fatalf("Roots = %q, want %q", roots, want)
	}
	w, err := NewWalker(rule, testenv.Get)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	st, err := w.Walk(ctx, roots[0], func(p Page) error {
		got = append(got, strings.TrimPrefix(p.URL, srv.URL))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/p/1", "/p/2", "/p/3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pages = %q, want %q", got, want)
	}
	want := Stats{Sitemaps: 5, Failed: 1, Pages: 3, Filtered: 2, Skipped: 1}
	st.Errors = nil
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
	if n, _ := hits.Load("/sitemap.xml"); *n.(*int) != 1 {
		t.Errorf("the index was fetched %d times, want once", *n.(*int))
	}
	if _, fetched := hits.Load("/sitemap-deeper.xml"); fetched {
		t.Error("a sitemap four levels down was fetched")
	}
}

func TestWalker_stops(t *testing.T) {
	srv, _ := shop(t)
	w := &Walker{Fetch: testenv.Get}
	stop := errors.New("enough")
	n := 0
	_, err := w.Walk(context.Background(), srv.URL+"/sitemap.xml", func(Page) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("Walk = %v after %d pages, want the callback's error after 2", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Walk(ctx, srv.URL+"/sitemap.xml", func(Page) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk with a cancelled context = %v", err)
	}
	if _, err := RobotsSitemaps(context.Background(), testenv.Get, []string{srv.URL + "/nothing-here/../"}); err != nil {
		t.Errorf("RobotsSitemaps: %v", err)
	}
	if _, err := RobotsSitemaps(context.Background(), func(context.Context, string) ([]byte, error) {
		return []byte("User-agent: *\n"), nil
	}, []string{"https://a.example/"}); !errors.Is(err, ErrNoRobotsSitemaps) {
		t.Errorf("RobotsSitemaps without Sitemap lines = %v, want ErrNoRobotsSitemaps", err)
	}
}

// TestParse_deep (issue 29): a sitemap of nested elements stops at
// MaxNesting, keeping what came before, whatever it holds beyond: 50 KB
// gzipped of "<a>" (50 MiB unzipped) took 34 s and 1.8 GB, a name kept
// for each open element. A cancelled context stops a parse too.
func TestParse_deep(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	io.WriteString(zw, `<urlset><url><loc>https://shop.example/p/1</loc></url><url>`)
	chunk := []byte(strings.Repeat("<a>", 1<<16))
	for range (5 << 20) / len(chunk) { // 5 MiB unzipped: 1.7M open elements, 170 MB before
		zw.Write(chunk)
	}
	zw.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := Parse(context.Background(), bomb.Bytes())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(locs(f), []string{"https://shop.example/p/1"}) || !f.Truncated {
		t.Errorf("%q, truncated %v; want the first URL and truncated", locs(f), f.Truncated)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("%d MiB allocated for a file cut at depth %d, want at most 16", alloc>>20, MaxNesting)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Parse(ctx, []byte(`<urlset><url><loc>https://shop.example/p/1</loc></url></urlset>`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
