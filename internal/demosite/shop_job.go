package demosite

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ShopJobYAML is the job file of the shop at baseURL: its seeds are the
// home page and the JSON API's first page, and its kinds are start (the
// home page), category, list, api and product (the item kind). With
// sitemaps, it also walks the sitemaps robots.txt names, as products.
func ShopJobYAML(name, baseURL string, sitemaps bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `name: %s
seeds: ["%s/", {url: "%s/api/products?page=1", kind: api}]
allow_private_networks: true
`, name, baseURL, baseURL)
	if sitemaps {
		b.WriteString("sitemaps:\n  - {url: robots, kind: product, allow: \"/p/\\\\d+$\"}\n")
	}
	b.WriteString(`kinds:
  start:
    links:
      - {css: "nav.cats a", kind: category}
  category:
    links:
      - {css: "a.sub", kind: list}
  list:
    links:
      - {css: "a.next", kind: list}
      - {xpath: "//a[@class='product']/@href", kind: product}
      - {css: "ul.products a", kind: product, allow: "/p/", deny: "print="}
  api:
    format: json
    links:
      - {json: "items.#.url", kind: product}
      - {json: "next", kind: api}
  product:
    item: true
    fields:
      title: {css: "h1", required: true}
      price: {css: ".price", type: number}
      sku:   {xpath: "//span[@itemprop='sku']"}
      brand: {jsonld: "brand.name"}
      code:  {css: ".code", regex: "SKU-(\\d+)", type: integer}
      date:  {css: "time", attr: datetime, type: date}
      tags:  {css: ".tag", all: true}
    links:
      - {css: "a.related", kind: product}
dedup: {window: 168h, granularity: 24h, capacity: 100000, error_rate: 0.001}
max_retries: 2
per_host_rps: 1000
per_host_concurrency: 32
`)
	return b.String()
}

// ShopTally is what a correct crawl of the whole shop with its job finds.
type ShopTally struct {
	// Items are the product pages stored, by path (/p/7), each with the
	// fields the job extracts, as Go values after conversion (float64,
	// int64, string, []string).
	Items map[string]map[string]any
	// ByReach counts the products by how they are reached (ReachList,
	// ReachRelated, ReachAPI).
	ByReach map[string]int
	// Pages are the pages of the non-item kinds, by kind: start, category,
	// list and api.
	Pages map[string]int
	// SitemapURLs is how many page URLs the sitemaps list (every product,
	// and the home page).
	SitemapURLs int
}

// Tally returns what a correct crawl of the shop finds.
func (s *Shop) Tally() ShopTally {
	t := ShopTally{Items: map[string]map[string]any{}, ByReach: map[string]int{},
		Pages: map[string]int{"start": 1, "api": (len(s.apiIDs()) + apiPerPage - 1) / apiPerPage}}
	cats := map[string]bool{}
	for _, sb := range s.subs {
		cats[sb.cat] = true
		t.Pages["list"] += (len(sb.listed()) + s.opts.PerPage - 1) / s.opts.PerPage
	}
	t.Pages["category"] = len(cats)
	for id := 1; id <= s.lastID(); id++ {
		t.Items[fmt.Sprintf("/p/%d", id)] = s.Fields(id)
		t.ByReach[reach(id)]++
	}
	t.SitemapURLs = s.lastID() + 1
	return t
}

// Fields are the fields the shop's job extracts from product id.
func (s *Shop) Fields(id int) map[string]any {
	p := s.product(id)
	date, _ := time.Parse(time.RFC3339, p.date())
	return map[string]any{
		"title": p.name(),
		"price": p.price,
		"sku":   p.sku(),
		"brand": p.brand(),
		"code":  int64(id),
		"date":  date.UTC().Format(time.RFC3339),
		"tags":  p.tags(),
	}
}

// Products is the number of products of the shop.
func (s *Shop) Products() int { return s.lastID() }

// LinksTo is how many links to product id the shop's pages hold for its
// job: one on its sub-category's list page (if listed there), one on the
// JSON API (if it lists it), one in the related links of each of the two
// products before it. A crawl of the whole shop discovers that many links
// to it: one is stored, the others are duplicates.
func (s *Shop) LinksTo(id int) int {
	n := 0
	if reach(id) == ReachList {
		n++
	}
	if inAPI(id) {
		n++
	}
	for _, p := range []int{id - 1, id - 2} {
		if p >= 1 && slices.Contains(s.related(p), id) {
			n++
		}
	}
	return n
}
