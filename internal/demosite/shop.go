package demosite

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
)

// Shop is the demo shop, a site of every shape a job's kinds describe:
// categories → sub-categories → paginated product lists → products, with
// prices in several locales, JSON-LD, related-product links (some products
// are reached only through them), a JSON "load more" API (some only
// through it), and a sitemap index with a gzip part named in robots.txt.
// It is an http.Handler; URLs are made absolute from the request's Host.
type Shop struct {
	opts ShopOptions
	subs []sub
}

// NewShop returns a shop shaped by opts.
func NewShop(opts ShopOptions) *Shop {
	opts.applyDefaults()
	s := &Shop{opts: opts}
	s.subs = s.catalog()
	return s
}

// ServeHTTP serves the shop's pages.
func (s *Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base := "http://" + r.Host
	path := r.URL.Path
	switch {
	case path == "/":
		s.home(w)
	case path == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "User-agent: *\nDisallow: /cart\nSitemap: %s/sitemap.xml\n", base)
	case path == "/sitemap.xml":
		s.sitemapIndex(w, base)
	case path == "/sitemap-products-1.xml.gz" || path == "/sitemap-products-2.xml":
		s.sitemap(w, base, strings.HasSuffix(path, ".gz"))
	case path == "/api/products":
		s.api(w, r)
	case strings.HasPrefix(path, "/c/"):
		s.category(w, r, strings.Split(strings.TrimPrefix(path, "/c/"), "/"))
	case strings.HasPrefix(path, "/p/"):
		id, err := strconv.Atoi(strings.TrimPrefix(path, "/p/"))
		if err != nil || id < 1 || id > s.lastID() {
			http.NotFound(w, r)
			return
		}
		s.productPage(w, id)
	default:
		http.NotFound(w, r)
	}
}

func (s *Shop) page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s | Demo Shop</title></head>\n<body>\n%s</body></html>\n",
		html.EscapeString(title), body)
}

// home links every category.
func (s *Shop) home(w http.ResponseWriter) {
	var b strings.Builder
	b.WriteString(`<nav class="cats">`)
	seen := map[string]bool{}
	for _, sb := range s.subs {
		if !seen[sb.cat] {
			seen[sb.cat] = true
			fmt.Fprintf(&b, `<a href="/c/%s">%s</a> `, sb.cat, sb.cat)
		}
	}
	b.WriteString("</nav>\n<p>Welcome. <a href=\"/cart\">Cart</a> <a href=\"/about\">About</a></p>\n")
	s.page(w, "Home", b.String())
}

// category serves /c/CAT (its sub-categories) and /c/CAT/SUB?page=N (a
// list page of products).
func (s *Shop) category(w http.ResponseWriter, r *http.Request, parts []string) {
	var b strings.Builder
	switch len(parts) {
	case 1:
		for _, sb := range s.subs {
			if sb.cat == parts[0] {
				fmt.Fprintf(&b, `<a class="sub" href="/c/%s/%s">%s</a>`+"\n", sb.cat, sb.name, sb.name)
			}
		}
	case 2:
		for _, sb := range s.subs {
			if sb.cat == parts[0] && sb.name == parts[1] {
				if !s.listPage(&b, r, sb) {
					http.NotFound(w, r)
					return
				}
			}
		}
	}
	if b.Len() == 0 {
		http.NotFound(w, r)
		return
	}
	s.page(w, strings.Join(parts, " / "), b.String())
}

// listPage writes one page of a sub-category's products; false when the
// page does not exist.
func (s *Shop) listPage(b *strings.Builder, r *http.Request, sb sub) bool {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if r.URL.Query().Get("page") == "" {
		n, err = 1, nil
	}
	listed := sb.listed()
	pages := (len(listed) + s.opts.PerPage - 1) / s.opts.PerPage
	if err != nil || n < 1 || n > pages {
		return false
	}
	b.WriteString(`<ul class="products">` + "\n")
	for _, id := range listed[(n-1)*s.opts.PerPage : min(n*s.opts.PerPage, len(listed))] {
		p := s.product(id)
		fmt.Fprintf(b, `<li><a class="product" href="/p/%d">%s</a> <span class="price">%s</span> <a href="/p/%d?print=1">print</a></li>`+"\n",
			id, html.EscapeString(p.name()), html.EscapeString(p.text()), id)
	}
	b.WriteString("</ul>\n")
	if n < pages {
		fmt.Fprintf(b, `<a class="next" href="/c/%s/%s?page=%d">Next</a>`+"\n", sb.cat, sb.name, n+1)
	}
	return true
}

// productPage writes a product: its fields in the page and in JSON-LD
// (after a breadcrumb block, so jsonld must look past the first block).
func (s *Shop) productPage(w http.ResponseWriter, id int) {
	p := s.product(id)
	ld, _ := json.Marshal(map[string]any{
		"@context": "https://schema.org", "@graph": []any{
			map[string]any{"@type": "Organization", "name": "Demo Shop"},
			map[string]any{"@type": "Product", "name": p.name(), "sku": p.sku(),
				"brand":  map[string]any{"@type": "Brand", "name": p.brand()},
				"offers": map[string]any{"@type": "Offer", "price": p.price}},
		}})
	var b strings.Builder
	fmt.Fprintf(&b, `<script type="application/ld+json">{"@type": "BreadcrumbList", "itemListElement": []}</script>
<script type="application/ld+json">%s</script>
<h1>%s</h1>
<span class="price">%s</span>
<p class="code">Item code: %s (ships in %d days)</p>
<span itemprop="sku">%s</span>
<time datetime="%s">%s</time>
<ul>`, ld, html.EscapeString(p.name()), html.EscapeString(p.text()), p.sku(), id%5+1, p.sku(), p.date(), p.date()[:10])
	for _, t := range p.tags() {
		fmt.Fprintf(&b, `<li class="tag">%s</li>`, t)
	}
	b.WriteString("</ul>\n<div class=\"related\">")
	for _, r := range s.related(id) {
		fmt.Fprintf(&b, `<a class="related" href="/p/%d">%s</a> `, r, html.EscapeString(s.product(r).name()))
	}
	b.WriteString("</div>\n")
	s.page(w, p.name(), b.String())
}

// apiPerPage is how many products one page of the JSON API holds.
const apiPerPage = 4

// api serves /api/products?page=N: {"items": [{"url", "name", "price"}],
// "next": URL or null}.
func (s *Shop) api(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	ids := s.apiIDs()
	pages := (len(ids) + apiPerPage - 1) / apiPerPage
	if err != nil || n < 1 || n > pages {
		http.NotFound(w, r)
		return
	}
	items := []map[string]any{}
	for _, id := range ids[(n-1)*apiPerPage : min(n*apiPerPage, len(ids))] {
		p := s.product(id)
		items = append(items, map[string]any{"url": fmt.Sprintf("/p/%d", id), "name": p.name(), "price": p.price})
	}
	out := map[string]any{"items": items, "next": nil}
	if n < pages {
		out["next"] = fmt.Sprintf("/api/products?page=%d", n+1)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// sitemapIndex lists the two product sitemaps.
func (s *Shop) sitemapIndex(w http.ResponseWriter, base string) {
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>%[1]s/sitemap-products-1.xml.gz</loc><lastmod>2024-03-05</lastmod></sitemap>
  <sitemap><loc>%[1]s/sitemap-products-2.xml</loc></sitemap>
</sitemapindex>
`, base)
}

// sitemap lists the first half of the products (gzipped) or the second
// half with the home page.
func (s *Shop) sitemap(w http.ResponseWriter, base string, first bool) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	half := s.lastID() / 2
	from, to := 1, half
	if !first {
		from, to = half+1, s.lastID()
		fmt.Fprintf(&b, "  <url><loc>%s/</loc></url>\n", base)
	}
	for id := from; id <= to; id++ {
		fmt.Fprintf(&b, "  <url><loc>%s/p/%d</loc><lastmod>%s</lastmod></url>\n", base, id, s.product(id).date())
	}
	b.WriteString("</urlset>\n")
	if !first {
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write(b.Bytes())
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	zw := gzip.NewWriter(w)
	_, _ = zw.Write(b.Bytes())
	_ = zw.Close()
}
