package jobspec

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestJobSpec_PageKinds: the short form means exactly the two-kind job of
// the contract, and a job with kinds is its kinds.
func TestJobSpec_PageKinds(t *testing.T) {
	t.Run("short form", func(t *testing.T) {
		spec := parseTestdata(t, "contract.yaml")
		want := map[string]PageKind{
			KindStart: {Links: []LinkRule{
				{CSS: "a.next", Attr: "href", Kind: KindStart},
				{CSS: ".item a", Attr: "href", Kind: KindDetail},
			}},
			KindDetail: {Item: true, Fields: spec.Fields},
		}
		if got := spec.PageKinds(); !reflect.DeepEqual(got, want) {
			t.Errorf("PageKinds:\n got %+v\nwant %+v", got, want)
		}
		if spec.NextLink.Kind != "" || spec.DetailLink.Kind != "" {
			t.Error("PageKinds changed the spec's own link rules")
		}
	})
	t.Run("short form without next_link", func(t *testing.T) {
		spec, err := Parse(strings.NewReader(minimalJob))
		if err != nil {
			t.Fatal(err)
		}
		start := spec.PageKinds()[KindStart]
		if want := []LinkRule{{CSS: ".item a", Attr: "href", Kind: KindDetail}}; !reflect.DeepEqual(start.Links, want) {
			t.Errorf("start links = %+v, want %+v", start.Links, want)
		}
	})
	t.Run("kinds", func(t *testing.T) {
		spec := parseShop(t)
		kinds := spec.PageKinds()
		if len(kinds) != 4 || !kinds["product"].Item || !kinds["api"].JSONPage() || kinds["category"].Item {
			t.Fatalf("PageKinds = %+v", kinds)
		}
		if got := kinds["category"].Links[3]; got.Allow != `/p/\d+$` || got.Deny != `\?print` || got.Kind != "product" {
			t.Errorf("category link 3 = %+v", got)
		}
		if got := kinds["product"].Fields["price"]; got.Type != TypeNumber || got.CSS != ".price" {
			t.Errorf("product price = %+v", got)
		}
		if !kinds["product"].Fields["title"].Required || kinds["product"].Fields["code"].Regex != `SKU-(\d+)` {
			t.Errorf("product fields = %+v", kinds["product"].Fields)
		}
	})
}

// parseShop parses testdata/shop.yaml, the contract's example of kinds.
func parseShop(t *testing.T) *Job {
	t.Helper()
	return parseTestdata(t, "shop.yaml")
}

// parseTestdata parses the job file testdata/name.
func parseTestdata(t *testing.T, name string) *Job {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return spec
}

// TestParseJobSpec_seedsAndSitemaps: seeds given as URLs or {url, kind},
// sitemaps entries as written.
func TestParseJobSpec_seedsAndSitemaps(t *testing.T) {
	spec := parseShop(t)
	if want := []string{"https://shop.example/", "https://shop.example/api/products?page=1"}; !reflect.DeepEqual(spec.Seeds, want) {
		t.Errorf("Seeds = %q, want %q", spec.Seeds, want)
	}
	if spec.SeedList != nil {
		t.Errorf("SeedList = %+v, want it moved into Seeds", spec.SeedList)
	}
	if k := spec.SeedKind(spec.Seeds[0]); k != KindStart {
		t.Errorf("SeedKind(plain seed) = %q, want start", k)
	}
	if k := spec.SeedKind(spec.Seeds[1]); k != "api" {
		t.Errorf("SeedKind(api seed) = %q, want api", k)
	}
	want := []SitemapRule{
		{URL: "https://shop.example/sitemap.xml", Kind: "product", Allow: "/p/"},
		{URL: SitemapsFromRobots, Kind: "product"},
	}
	if !reflect.DeepEqual(spec.Sitemaps, want) {
		t.Errorf("Sitemaps = %+v, want %+v", spec.Sitemaps, want)
	}
	if want := []string{"shop.example"}; !reflect.DeepEqual(spec.AllowedDomains, want) {
		t.Errorf("AllowedDomains = %q, want %q", spec.AllowedDomains, want)
	}
}

// TestJobSpec_JSON: a spec travels to the masters and slaves as JSON:
// kinds, seed kinds and sitemaps survive it, and a spec stored before
// kinds existed still decodes to the short form.
func TestJobSpec_JSON(t *testing.T) {
	spec := parseShop(t)
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.PageKinds(), spec.PageKinds()) || !reflect.DeepEqual(back.Sitemaps, spec.Sitemaps) ||
		!reflect.DeepEqual(back.SeedKinds, spec.SeedKinds) {
		t.Errorf("after a JSON round trip:\n got %+v\nwant %+v", back, spec)
	}
	old, err := Decode([]byte(`{"name":"old","detail_link":{"css":"a","attr":"href"},"fields":{"t":{"css":"h1"}},"dedup":{"window":"1h","granularity":"1h","capacity":5,"error_rate":0.01}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PageKind{
		KindStart:  {Links: []LinkRule{{CSS: "a", Attr: "href", Kind: KindDetail}}},
		KindDetail: {Item: true, Fields: map[string]FieldRule{"t": {CSS: "h1"}}},
	}
	if got := old.PageKinds(); !reflect.DeepEqual(got, want) {
		t.Errorf("an old spec's kinds = %+v, want %+v", got, want)
	}
}

// shopWith returns the shop job with one line replaced.
func shopWith(t *testing.T, old, new string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("testdata/shop.yaml has no %q", old)
	}
	return strings.Replace(string(b), old, new, 1)
}

// TestParseJobSpec_kindErrors: every mistake in a crawl model is refused
// with a message that names the field by its path in the file, never by a
// Go type.
func TestParseJobSpec_kindErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"bad type", shopWith(t, "type: number", `type: money`),
			`kinds.product.fields.price.type: "money" is not one of string, number, integer, date, bool, url`},
		{"undefined kind", shopWith(t, "{css: \"a.sub\", kind: category}", `{css: "a.sub", kind: categry}`),
			`kinds.category.links[0].kind: "categry" is not a kind of this job`},
		{"link without kind", shopWith(t, "{css: \"a.sub\", kind: category}", `{css: "a.sub"}`),
			"kinds.category.links[0].kind: the kind the links lead to is required"},
		{"no item kind", shopWith(t, "item: true", "item: false"), "kinds.product.fields: only item kinds"},
		{"two selectors", shopWith(t, `sku:   {xpath: "//span[@itemprop='sku']"}`, `sku: {xpath: "//span", css: span}`),
			"kinds.product.fields.sku: css and xpath are both given"},
		{"no selector", shopWith(t, `tags:  {css: ".tag", all: true}`, `tags: {all: true}`),
			"kinds.product.fields.tags.css: selector is empty (give exactly one of css, xpath, json, jsonld)"},
		{"bad regex", shopWith(t, `regex: "SKU-(\\d+)"`, `regex: "SKU-(\\d+"`),
			"kinds.product.fields.code.regex: "},
		{"bad allow", shopWith(t, `allow: "/p/\\d+$"`, `allow: "/p/[0-9"`), "kinds.category.links[3].allow: "},
		{"bad deny", shopWith(t, `deny: "\\?print"`, `deny: "*print"`), "kinds.category.links[3].deny: "},
		{"bad xpath", shopWith(t, `//a[@class='product']/@href`, `//a[@class=`), "kinds.category.links[2].xpath: "},
		{"bad css", shopWith(t, `nav.cats a`, `nav[`), "kinds.start.links[0].css: "},
		{"css on a json page", shopWith(t, `{json: "next", kind: api}`, `{css: "a", kind: api}`),
			"kinds.api.links[1].css: the kind's pages are JSON"},
		{"json on an html page", shopWith(t, `{css: "a.related", kind: product}`, `{json: "related", kind: product}`),
			"kinds.product.links[0].json: the kind's pages are HTML"},
		{"attr on jsonld", shopWith(t, `{jsonld: "brand.name"}`, `{jsonld: "brand.name", attr: content}`),
			"kinds.product.fields.brand.attr: "},
		{"bad format", shopWith(t, "format: json", "format: xml"), `kinds.api.format: "xml" is not one of html, json`},
		{"bad kind name", shopWith(t, "  category:\n", "  Category:\n"), `kinds: "Category" must be`},
		{"item without fields", shopWith(t, "  category:\n", "  category:\n    item: true\n"), "kinds.category.fields: an item kind needs"},
		{"seed of an undefined kind", shopWith(t, "kind: api}]", "kind: apii}]"), `seeds[1].kind: "apii" is not a kind`},
		{"plain seed without start", shopWith(t, "  start:\n    links:\n      - {css: \"nav.cats a\", kind: category}\n", ""),
			"seeds[0]: a seed without a kind is of kind start"},
		{"unknown seed key", shopWith(t, "{url: \"https://shop.example/api/products?page=1\", kind: api}", `{url: "https://shop.example/x", knd: api}`),
			`seeds: "knd" is not a key of a seed`},
		{"sitemap of an undefined kind", shopWith(t, "{url: robots, kind: product}", "{url: robots, kind: products}"),
			`sitemaps[1].kind: "products" is not a kind`},
		{"sitemap url", shopWith(t, "{url: robots, kind: product}", "{url: \"ftp://x/\", kind: product}"), "sitemaps[1].url: "},
		{"sitemap allow", shopWith(t, `allow: "/p/"}`, `allow: "(/p/"}`), "sitemaps[0].allow: "},
		{"short form beside kinds", shopWith(t, "kinds:\n", "detail_link: {css: a}\nkinds:\n"), "kinds: next_link, detail_link and fields are the short form"},
		{"short form link with a kind", minimalJob + "next_link: {css: a, kind: start}\n", "next_link.kind: "},
		{"short form json link", strings.Replace(minimalJob, `detail_link: {css: ".item a"}`, `detail_link: {json: "items"}`, 1), "detail_link.json: "},
		{"short form xpath field, bad type", minimalJob + "  price: {xpath: \"//b\", type: money}\n", `fields.price.type: "money"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Parse(strings.NewReader(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", spec)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "jobspec.") {
				t.Errorf("error %q names a Go type", err)
			}
		})
	}
}

// TestParseJobSpec_shortFormSelectors: the short form takes the new
// selectors and conversions too.
func TestParseJobSpec_shortFormSelectors(t *testing.T) {
	yaml := strings.Replace(minimalJob, `detail_link: {css: ".item a"}`, `detail_link: {xpath: "//div[@class='item']/a/@href", deny: "/ads/"}`, 1) +
		"  price: {css: .price, type: number, required: true}\n  brand: {jsonld: brand.name}\n"
	spec, err := Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if spec.DetailLink.XPath == "" || spec.DetailLink.Deny != "/ads/" || spec.Fields["price"].Type != TypeNumber {
		t.Errorf("spec = %+v", spec)
	}
}
