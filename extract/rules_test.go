package extract

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/jobspec"
)

// productKind uses every selector and every conversion on
// testdata/product.html.
var productKind = jobspec.PageKind{
	Item: true,
	Links: []jobspec.LinkRule{
		{CSS: "a.related", Kind: "product", Deny: `print=`},
		{XPath: "//nav[@class='crumbs']/a/@href", Kind: "category", Allow: `/c/`},
		{CSS: "a.next", Attr: "data-href", Kind: "reviews"},
		{CSS: ".no-such-link", Kind: "product"},
	},
	Fields: map[string]jobspec.FieldRule{
		"title":       {CSS: "h1", Required: true},
		"price":       {CSS: ".price", Type: "number"},
		"prices":      {CSS: ".price", All: true, Type: "number"},
		"discount":    {CSS: ".discount", Type: "number"},
		"code":        {CSS: ".code", Regex: `SKU-(\d+)`},
		"code_int":    {CSS: ".code", Regex: `SKU-(\d+)`, Type: "integer"},
		"ships":       {CSS: ".code", Regex: `\d+ days`},
		"sku":         {XPath: "//span[@itemprop='sku']"},
		"sku_count":   {XPath: "count(//span[@itemprop='sku'])", Type: "integer"},
		"brand":       {JSONLD: "brand.name"},
		"ld_price":    {JSONLD: "offers.price", Type: "number"},
		"ld_reviews":  {JSONLD: "aggregateRating.reviewCount", Type: "integer"},
		"ld_images":   {JSONLD: "image", All: true, Type: "url"},
		"crumb":       {JSONLD: "itemListElement.0.name"},
		"date":        {CSS: "time", Attr: "datetime", Type: "date"},
		"date_text":   {CSS: "time", Type: "date"},
		"in_stock":    {CSS: ".stock", Attr: "data-available", Type: "bool"},
		"stock":       {CSS: ".stock", Type: "integer"},
		"rating":      {XPath: "//span[@class='rating']/text()", Type: "number"},
		"tags":        {CSS: ".tag", All: true},
		"image":       {CSS: "img.main", Attr: "src", Type: "url"},
		"title_bool":  {CSS: "h1", Type: "bool"},
		"no_price":    {CSS: ".nothing", Type: "number"},
		"no_text":     {CSS: ".nothing"},
		"required_no": {CSS: ".nothing", Required: true, All: true},
	},
}

func compileKinds(t testing.TB, kinds map[string]jobspec.PageKind) *Rules {
	t.Helper()
	r, err := Compile(kinds)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return r
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKind_Extract_product: every selector kind and conversion on a real
// product page, against a golden file.
func TestKind_Extract_product(t *testing.T) {
	rules := compileKinds(t, map[string]jobspec.PageKind{"product": productKind})
	res, err := rules.Kind("product").Extract(context.Background(), "https://shop.example/p/1", readTestdata(t, "product.html"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Work <= 0 {
		t.Errorf("Work = %d, want it counted", res.Work)
	}
	res.Work = 0
	golden(t, "product.result.golden.json", res)

	checks := map[string]any{
		"title": "Aurora X2", "price": 1299.0, "discount": -13.4, "code": "48213", "code_int": int64(48213),
		"ships": "2 days", "sku": "AX2-001", "sku_count": int64(1), "brand": "Aurora", "ld_price": 1299.0,
		"ld_reviews": int64(1024), "crumb": "Phones", "date": "2024-03-05T06:30:00Z", "date_text": "2024-03-05T00:00:00Z",
		"in_stock": true, "stock": int64(12), "rating": 4.6, "tags": []string{"5G", "OLED"},
		"image": "https://cdn.shop.example/img/ax2.jpg", "title_bool": nil, "no_price": nil, "no_text": "",
		"prices":    []any{1299.0, 1299.0, 1299.5, 12000.0, 1499.0},
		"ld_images": []any{"https://cdn.shop.example/img/ax2.jpg", "https://shop.example/img/ax2-back.jpg"},
	}
	for name, want := range checks {
		if got := res.Fields[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("field %s = %#v, want %#v", name, got, want)
		}
	}
	if want := []string{"required_no"}; !reflect.DeepEqual(res.Missing, want) {
		t.Errorf("Missing = %q, want %q", res.Missing, want)
	}
	if len(res.FieldErrors) != 1 || res.FieldErrors[0].Field != "title_bool" {
		t.Errorf("FieldErrors = %+v, want one, for title_bool", res.FieldErrors)
	}
	wantLinks := []Link{
		{URL: "https://shop.example/p/2", Kind: "product", Rule: 0},
		{URL: "https://shop.example/p/3?ref=related", Kind: "product", Rule: 0},
		{URL: "https://shop.example/c/phones", Kind: "category", Rule: 1},
		{URL: "https://shop.example/p/2/reviews?page=2", Kind: "reviews", Rule: 2},
	}
	if !reflect.DeepEqual(res.Links, wantLinks) {
		t.Errorf("Links = %+v\nwant %+v", res.Links, wantLinks)
	}
	if want := []int{6, 2, 1, 0}; !reflect.DeepEqual(res.Found, want) {
		t.Errorf("Found = %v, want %v (javascript: and mailto: never count)", res.Found, want)
	}
	if res.Invalid != 2 || res.Filtered != 2 {
		t.Errorf("Invalid, Filtered = %d, %d; want 2 (a broken and an ftp URL), 2 (print=, and / outside /c/)", res.Invalid, res.Filtered)
	}
}

// TestKind_Extract_json: a JSON page's links and fields by gjson path;
// JSON numbers are read as numbers.
func TestKind_Extract_json(t *testing.T) {
	rules := compileKinds(t, map[string]jobspec.PageKind{"api": {
		Format: "json", Item: true,
		Links: []jobspec.LinkRule{{JSON: "items.#.url", Kind: "product"}, {JSON: "next", Kind: "api"}},
		Fields: map[string]jobspec.FieldRule{
			"titles": {JSON: "items.#.title", All: true},
			"first":  {JSON: "items.0.title"},
			"prices": {JSON: "items.#.price", All: true, Type: "number"},
			"stock":  {JSON: "items.#.stock", All: true, Type: "integer"},
			"tags":   {JSON: "items.0.tags", All: true},
			"added":  {JSON: "items.0.added", Type: "date"},
			"total":  {JSON: "total", Type: "number"},
			"whole":  {JSON: "total", Type: "integer"},
		},
	}})
	res, err := rules.Kind("api").Extract(context.Background(), "https://shop.example/api/products?page=2", readTestdata(t, "api.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{URL: "https://shop.example/p/10", Kind: "product"},
		{URL: "https://shop.example/p/11", Kind: "product"},
		{URL: "https://shop.example/api/products?page=3", Kind: "api", Rule: 1},
	}
	if !reflect.DeepEqual(res.Links, want) {
		t.Errorf("Links = %+v, want %+v", res.Links, want)
	}
	for name, w := range map[string]any{
		"titles": []string{"Aurora X10", "Aurora X11", "bad"}, "first": "Aurora X10",
		"prices": []any{1499.5, 1299.0}, "stock": []any{int64(3), nil}, "tags": []string{"5G", "eSIM"},
		"added": "2024-03-05T00:00:00Z", "total": 1234.567, "whole": nil,
	} {
		if got := res.Fields[name]; !reflect.DeepEqual(got, w) {
			t.Errorf("field %s = %#v, want %#v", name, got, w)
		}
	}
	if len(res.FieldErrors) != 2 {
		t.Errorf("FieldErrors = %+v, want stock's \"none\" and total's 1234.567", res.FieldErrors)
	}
	if _, err := rules.Kind("api").Extract(context.Background(), "https://shop.example/api", []byte("<html>not json</html>")); !errors.Is(err, errNotJSON) {
		t.Errorf("Extract(HTML on a JSON kind) = %v, want errNotJSON", err)
	}
}

// TestKind_Extract_shortForm: the short form's kinds, compiled from a job,
// find what the old calls found.
func TestKind_Extract_shortForm(t *testing.T) {
	spec := &jobspec.Job{
		NextLink:   &jobspec.LinkRule{CSS: "a.next", Attr: "href"},
		DetailLink: &jobspec.LinkRule{CSS: ".item a", Attr: "href"},
		Fields:     detailRules,
	}
	rules, err := CompileJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	list := readTestdata(t, "list.html")
	res, err := rules.Kind(jobspec.KindStart).Extract(context.Background(), "https://example.com/list/2", list)
	if err != nil {
		t.Fatal(err)
	}
	doc := parseFile(t, "https://example.com/list/2", "list.html")
	var want []string
	for _, rule := range []*jobspec.LinkRule{spec.NextLink, spec.DetailLink} {
		for _, ref := range doc.Links(rule) {
			if u, err := doc.Base().Parse(ref); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
				u.Fragment = ""
				want = append(want, u.String())
			}
		}
	}
	var got []string
	for _, l := range res.Links {
		got = append(got, l.URL)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("start links = %q\nwant %q", got, want)
	}
	detail, err := rules.Kind(jobspec.KindDetail).Extract(context.Background(), "https://example.com/detail/7?cat=tech", readTestdata(t, "detail.html"))
	if err != nil {
		t.Fatal(err)
	}
	if old := parseFile(t, "https://example.com/detail/7?cat=tech", "detail.html").Fields(detailRules); !reflect.DeepEqual(detail.Fields, old) {
		t.Errorf("detail fields = %v\nwant %v", detail.Fields, old)
	}
}

// TestKind_Extract_hostile: issue 18's hostile page and selector complete
// in work linear in the page through the whole extraction; XPath, which
// antchfx/xpath evaluates node by node, stops at the page's budget with
// ErrLimit, as does an XPath whose cost is quadratic; a cancelled context
// stops extraction.
func TestKind_Extract_hostile(t *testing.T) {
	page := hostilePage(300)
	rules := compileKinds(t, map[string]jobspec.PageKind{
		"css": {Item: true, Fields: map[string]jobspec.FieldRule{"x": {CSS: hostileSelector}}},
		"xpath": {Item: true, Fields: map[string]jobspec.FieldRule{
			"x": {XPath: "//div//div//div//div//div//a"},
		}},
		"quadratic": {Item: true, Fields: map[string]jobspec.FieldRule{
			"x": {XPath: "//div[count(.//div[contains(., 'nothing')]) > 1000]"},
		}},
	})
	res, err := rules.Kind("css").Extract(context.Background(), "https://example.com/", page)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fields["x"] != "" {
		t.Errorf("x = %q, want nothing", res.Fields["x"])
	}
	if bound := int64(2 * 7 * 303); res.Work > bound {
		t.Errorf("%d units of work, want at most %d: two per element per compound", res.Work, bound)
	}
	limit := DefaultBudget.limit(303)
	if _, err := rules.Kind("xpath").Extract(context.Background(), "https://example.com/", page); !errors.Is(err, ErrLimit) {
		t.Errorf("hostile XPath: %v, want ErrLimit", err)
	}
	wordy := []byte(strings.Repeat("<div>", 300) + strings.Repeat("lorem ipsum ", 10_000) + strings.Repeat("</div>", 300))
	if _, err := rules.Kind("quadratic").Extract(context.Background(), "https://example.com/", wordy); !errors.Is(err, ErrLimit) {
		t.Errorf("quadratic XPath: %v, want ErrLimit past %d units", err, limit)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := []byte(strings.Repeat("<div><p>x</p></div>", 20_000))
	if _, err := rules.Kind("css").Extract(ctx, "https://example.com/", big); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestCompile_errors: a rule that does not compile is named by its path.
func TestCompile_errors(t *testing.T) {
	for _, tc := range []struct {
		kind jobspec.PageKind
		want string
	}{
		{jobspec.PageKind{Links: []jobspec.LinkRule{{CSS: "a[", Kind: "x"}}}, "kinds.k.links[0].css: "},
		{jobspec.PageKind{Links: []jobspec.LinkRule{{XPath: "//a[", Kind: "x"}}}, "kinds.k.links[0].xpath: "},
		{jobspec.PageKind{Links: []jobspec.LinkRule{{CSS: "a", Allow: "(", Kind: "x"}}}, "kinds.k.links[0].allow: "},
		{jobspec.PageKind{Item: true, Fields: map[string]jobspec.FieldRule{"f": {CSS: "p", Regex: "["}}}, "kinds.k.fields.f.regex: "},
		{jobspec.PageKind{Item: true, Fields: map[string]jobspec.FieldRule{"f": {}}}, "kinds.k.fields.f.css: selector is empty"},
	} {
		if _, err := Compile(map[string]jobspec.PageKind{"k": tc.kind}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want an error with %q", tc.kind, err, tc.want)
		}
	}
}
