package demosite

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/sitemap"
)

func serveShop(t *testing.T, opts ShopOptions) (*Shop, *httptest.Server) {
	t.Helper()
	shop := NewShop(opts)
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	return shop, srv
}

// walkShop crawls the shop in this process with its own job's kinds,
// breadth-first, each URL once as the kind of the first link that found
// it, as the cluster will: it returns the items by path and the pages of
// each kind.
func walkShop(t *testing.T, base string, spec *jobspec.Job) (map[string]map[string]any, map[string]int) {
	t.Helper()
	rules, err := extract.CompileJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct{ url, kind string }
	var queue []ref
	seen := map[string]bool{}
	for _, s := range spec.Seeds {
		queue = append(queue, ref{s, spec.SeedKind(s)})
		seen[s] = true
	}
	items, pages := map[string]map[string]any{}, map[string]int{}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		body, err := testenv.Get(context.Background(), r.url)
		if err != nil {
			t.Fatalf("%s (%s): %v", r.url, r.kind, err)
		}
		res, err := rules.Kind(r.kind).Extract(context.Background(), r.url, body)
		if err != nil {
			t.Fatalf("%s (%s): %v", r.url, r.kind, err)
		}
		if len(res.FieldErrors) > 0 || len(res.Missing) > 0 {
			t.Errorf("%s: field errors %v, missing %v", r.url, res.FieldErrors, res.Missing)
		}
		pages[r.kind]++
		if res.Fields != nil {
			items[strings.TrimPrefix(r.url, base)] = res.Fields
		}
		for _, l := range res.Links {
			if !seen[l.URL] && strings.HasPrefix(l.URL, base) {
				seen[l.URL] = true
				queue = append(queue, ref{l.URL, l.Kind})
			}
		}
	}
	return items, pages
}

// TestShop_crawl: the shop's job, run over the shop by its own kinds,
// finds exactly the products and fields the tally says, through lists,
// related links and the JSON API alike, with every price format read.
func TestShop_crawl(t *testing.T) {
	shop, srv := serveShop(t, ShopOptions{})
	spec, err := jobspec.Parse(strings.NewReader(ShopJobYAML("shop", srv.URL, false)))
	if err != nil {
		t.Fatalf("the shop's job: %v", err)
	}
	tally := shop.Tally()
	items, pages := walkShop(t, srv.URL, spec)
	delete(pages, "product")
	if !reflect.DeepEqual(pages, tally.Pages) {
		t.Errorf("pages by kind = %v, want %v", pages, tally.Pages)
	}
	if len(items) != shop.Products() {
		t.Errorf("%d products found, want %d", len(items), shop.Products())
	}
	for path, want := range tally.Items {
		if got := items[path]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fields\n got %#v\nwant %#v", path, got, want)
		}
	}
	for _, r := range []string{ReachList, ReachRelated, ReachAPI} {
		if tally.ByReach[r] == 0 {
			t.Errorf("no product is reached only by %s: the shop does not test it", r)
		}
	}
	formats := map[string]bool{}
	for id := 1; id <= shop.Products(); id++ {
		p := shop.product(id)
		formats[p.format.before+p.format.after] = true
	}
	if len(formats) != len(priceFormats) {
		t.Errorf("the products use %d price formats, want all %d", len(formats), len(priceFormats))
	}
}

// TestShop_sitemaps: robots.txt names a sitemap index whose parts, one
// gzipped, list every product and the home page.
func TestShop_sitemaps(t *testing.T) {
	shop, srv := serveShop(t, ShopOptions{Categories: 2})
	ctx := context.Background()
	spec, err := jobspec.Parse(strings.NewReader(ShopJobYAML("shop", srv.URL, true)))
	if err != nil {
		t.Fatal(err)
	}
	rule := spec.Sitemaps[0]
	roots, err := sitemap.Roots(ctx, rule, testenv.Get, spec.Seeds)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sitemap.NewWalker(rule, testenv.Get)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	st, err := w.Walk(ctx, roots[0], func(p sitemap.Page) error {
		got = append(got, p.URL)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != shop.Products() || st.Sitemaps != 3 || st.Filtered != 1 || st.Failed != 0 {
		t.Errorf("sitemaps gave %d pages (stats %+v), want %d products from 3 sitemaps, the home page filtered",
			len(got), st, shop.Products())
	}
	if tally := shop.Tally(); tally.SitemapURLs != st.Pages+st.Filtered {
		t.Errorf("tally says %d sitemap URLs, the walk read %d", tally.SitemapURLs, st.Pages+st.Filtered)
	}
}

// TestShop_pages: what each page kind serves, and what it refuses.
func TestShop_pages(t *testing.T) {
	_, srv := serveShop(t, ShopOptions{})
	for _, tc := range []struct {
		path   string
		status int
		has    string
	}{
		{"/", 200, `<nav class="cats"><a href="/c/phones1">`},
		{"/c/phones1", 200, `<a class="sub" href="/c/phones1/s1">`},
		{"/c/phones1/s1", 200, `<a class="next" href="/c/phones1/s1?page=2">`},
		{"/c/phones1/s1?page=2", 200, `class="product"`},
		{"/c/phones1/s1?page=9", 404, ""},
		{"/c/nothing", 404, ""},
		{"/p/1", 200, `"@graph"`},
		{"/p/0", 404, ""},
		{"/api/products?page=1", 200, `"next":"/api/products?page=2"`},
		{"/api/products?page=99", 404, ""},
		{"/robots.txt", 200, "Sitemap: " + srv.URL + "/sitemap.xml"},
		{"/sitemap.xml", 200, "<sitemapindex"},
		{"/sitemap-products-2.xml", 200, "<urlset"},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.has) {
			t.Errorf("%s: %d %q, want %d with %q", tc.path, resp.StatusCode, body, tc.status, tc.has)
		}
	}
}

// TestShop_priceText: each locale writes the price as its shops do.
func TestShop_priceText(t *testing.T) {
	for _, tc := range []struct {
		f     int
		price float64
		want  string
	}{
		{0, 1299, "$1,299.00"}, {1, 1299, "1.299,00 €"}, {2, 1299.5, "1\u00a0299,50 zł"},
		{3, 12000, "¥12,000"}, {4, 12.5, "USD 12.50"}, {5, 1299.5, "CHF 1'299.50.-"}, {1, 47.5, "47,50 €"},
	} {
		if got := (product{price: tc.price, format: priceFormats[tc.f]}).text(); got != tc.want {
			t.Errorf("format %d of %v = %q, want %q", tc.f, tc.price, got, tc.want)
		}
		if v, err := extract.ParseNumber(tc.want); err != nil || v != tc.price {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", tc.want, v, err, tc.price)
		}
	}
}
