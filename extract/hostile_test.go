package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/jobspec"
)

// nestedLists is n "[" then n "]".
func nestedLists(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// ldPage is an HTML page with one JSON-LD block per block.
func ldPage(blocks ...string) []byte {
	var b strings.Builder
	b.WriteString("<html><head>")
	for _, block := range blocks {
		fmt.Fprintf(&b, `<script type="application/ld+json">%s</script>`, block)
	}
	b.WriteString("</head><body><h1>t</h1></body></html>")
	return []byte(b.String())
}

func brandKind(t *testing.T, budget Budget) *Kind {
	t.Helper()
	k := compileKinds(t, map[string]jobspec.PageKind{"p": {Item: true,
		Fields: map[string]jobspec.FieldRule{"brand": {JSONLD: "brand.name"}}}}).Kind("p")
	k.Budget = budget
	return k
}

// TestKind_Extract_jsonLDNestedLists (issue 29, item 1): a JSON-LD block
// of nested lists is read once, whatever its nesting, and every pass is
// counted: before, the block of 25k "[" then "]" took a second of
// re-reading each sub-list at every level and counted 12 units; 250k took
// 110 s and no context or budget could stop it.
func TestKind_Extract_jsonLDNestedLists(t *testing.T) {
	brand := `{"@type":"Product","brand":{"name":"Acme"}}`
	for _, tc := range []struct {
		name  string
		block string
	}{
		{"too deep", nestedLists(25_000)},
		{"deep as allowed", nestedLists(MaxJSONDepth - 1)},
		{"deep and wide", strings.Repeat("[", 400) + strings.Repeat(`{"a":[1,2,{"b":3}]},`, 2_000) + "1" + strings.Repeat("]", 400)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := ldPage(tc.block, brand)
			res, err := brandKind(t, Budget{}).Extract(context.Background(), "https://example.com/p", page)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fields["brand"] != "Acme" {
				t.Errorf("brand %v, want Acme from the second block", res.Fields["brand"])
			}
			if min := int64(len(tc.block) / 16); res.Work < min {
				t.Errorf("work %d units for a block of %d bytes: the JSON-LD walk is not counted (want at least %d)", res.Work, len(tc.block), min)
			}

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := brandKind(t, Budget{}).Extract(ctx, "https://example.com/p", page); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: %v, want context.Canceled", err)
			}
			_, err = brandKind(t, Budget{Base: 100}).Extract(context.Background(), "https://example.com/p", page)
			if !errors.Is(err, ErrLimit) {
				t.Errorf("budget of 100 units: %v, want ErrLimit", err)
			}
		})
	}
}

// TestKind_Extract_jsonLDGraph: the walk keeps what the old one found:
// lists within lists, each object before the objects of its @graph
// (nested @graph too, escaped keys too), and nothing inside other values.
func TestKind_Extract_jsonLDGraph(t *testing.T) {
	page := ldPage(`[[{"n":1}],{"n":2,"@graph":[{"n":3,"@graph":[[{"n":4}]]},{"n":5}],"x":{"n":6}}]`,
		`{"n":7,"\u0040graph":[{"n":8}]}`, `{"n":`, `"s"`)
	p, err := ParseContext(context.Background(), "https://example.com/", page)
	if err != nil {
		t.Fatal(err)
	}
	pg := p.page(context.Background(), Budget{})
	objects, err := pg.jsonLD()
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, o := range objects {
		vals, err := pg.jsonPathValues(o, "n")
		if err != nil || len(vals) != 1 {
			t.Fatalf("object %s: n %v, %v", o, vals, err)
		}
		ns = append(ns, vals[0].text)
	}
	if got := strings.Join(ns, ","); got != "1,2,3,4,5,7,8" {
		t.Errorf("objects in order %s, want 1,2,3,4,5,7,8", got)
	}
}

// TestKind_Extract_deepJSON (issue 29, item 3): a JSON page nested deeper
// than MaxJSONDepth is refused before gjson recurses into it (5M "[" then
// 5M "]" peaked at 1 GB of stack; 20M crashed the process), with an error
// naming the limit and the failure kind extract_limit. A JSON string that
// decodes to deep JSON (@fromstr) is refused the same way.
func TestKind_Extract_deepJSON(t *testing.T) {
	api := func(path string) *Kind {
		return compileKinds(t, map[string]jobspec.PageKind{"api": {Format: jobspec.FormatJSON,
			Links: []jobspec.LinkRule{{JSON: path, Kind: "api"}}}}).Kind("api")
	}
	_, err := api("items.#.url").Extract(context.Background(), "https://example.com/api", []byte(nestedLists(5_000_000)))
	if !errors.Is(err, ErrTooDeep) || FailureKind(err) != FailureLimit || !strings.Contains(err.Error(), "json nested deeper than 512 levels") {
		t.Errorf("5M nested lists: %v (kind %q), want ErrTooDeep, kind %s", err, FailureKind(err), FailureLimit)
	}
	if _, err := api("0.0.0").Extract(context.Background(), "https://example.com/api", []byte(nestedLists(MaxJSONDepth))); err != nil {
		t.Errorf("%d nested lists: %v", MaxJSONDepth, err)
	}
	inString := fmt.Sprintf(`{"s":%q}`, nestedLists(100_000))
	_, err = api("s|@fromstr").Extract(context.Background(), "https://example.com/api", []byte(inString))
	if !errors.Is(err, ErrTooDeep) {
		t.Errorf("deep JSON in a string, @fromstr: %v, want ErrTooDeep", err)
	}
}

// TestCompile_explodingModifiers (issue 29, item 3): the gjson modifiers
// whose work or output a page can blow up are refused when the job is
// compiled (as when it is validated), naming the rule; @pretty crashed
// the process on a 2 MB deep page, @flatten deep and @dig ran past 120 s.
func TestCompile_explodingModifiers(t *testing.T) {
	for _, path := range []string{"@pretty", "items|@pretty:{\"indent\":\"\\t\"}", "@dig:name", "[a,@dig:b]",
		`@flatten:{"deep":true}`, "@valid", "a|@fromstr|b|@fromstr", "#(a==1)|@pretty"} {
		for _, kind := range []jobspec.PageKind{
			{Format: jobspec.FormatJSON, Links: []jobspec.LinkRule{{JSON: path, Kind: "k"}}},
			{Item: true, Fields: map[string]jobspec.FieldRule{"f": {JSONLD: path}}},
		} {
			_, err := Compile(map[string]jobspec.PageKind{"k": kind})
			if err == nil || !strings.Contains(err.Error(), "kinds.k.") || !strings.Contains(err.Error(), "supported") {
				t.Errorf("Compile(%q) = %v, want an error naming the rule", path, err)
			}
		}
	}
	for _, path := range []string{"items.#.url", "@reverse", "@flatten", `\@pretty`, "a.@this", "s|@fromstr|a", "mail@pretty"} {
		kind := jobspec.PageKind{Format: jobspec.FormatJSON, Links: []jobspec.LinkRule{{JSON: path, Kind: "k"}}}
		if _, err := Compile(map[string]jobspec.PageKind{"k": kind}); err != nil {
			t.Errorf("Compile(%q): %v", path, err)
		}
	}
}

// TestKind_Extract_regexCounted (issue 29, item 8): a link rule's allow
// and deny and a field's regex are charged for the text they read: long
// links (a long <base href> under many short ones) and long texts count
// against the page's budget; they counted nothing.
func TestKind_Extract_regexCounted(t *testing.T) {
	base := "https://example.com/" + strings.Repeat("d/", 4_000)
	var page strings.Builder
	fmt.Fprintf(&page, `<html><head><base href=%q></head><body>`, base)
	for i := range 200 {
		fmt.Fprintf(&page, `<a href="p%d">x</a><p>%s %d</p>`, i, strings.Repeat("word ", 1_000), i)
	}
	page.WriteString("</body></html>")
	k := compileKinds(t, map[string]jobspec.PageKind{"p": {Item: true,
		Links:  []jobspec.LinkRule{{CSS: "a", Kind: "p", Allow: `/p\d+$`, Deny: `print`}},
		Fields: map[string]jobspec.FieldRule{"n": {CSS: "p", All: true, Regex: `(\d+)$`}}}}).Kind("p")
	res, err := k.Extract(context.Background(), "https://example.com/", []byte(page.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 200 || len(res.Fields["n"].([]string)) != 200 {
		t.Fatalf("%d links, %d values; want 200 each", len(res.Links), len(res.Fields["n"].([]string)))
	}
	// 200 links of 8 KB read by two patterns, 200 texts of 5 KB by one
	if min := int64(200 * (2*len(base) + 5_000) / 16); res.Work < min {
		t.Errorf("work %d units, want at least %d: the patterns' runs are not counted", res.Work, min)
	}
	k.Budget = Budget{Base: 50_000}
	if _, err := k.Extract(context.Background(), "https://example.com/", []byte(page.String())); !errors.Is(err, ErrLimit) {
		t.Errorf("budget of 50k units: %v, want ErrLimit", err)
	}
}

// TestConvert_exponents (issue 29, item 8): numbers read their exponent
// ("1e18" as an integer was 1) and what does not convert is an error, so
// null and counted ("0x1F" was 0).
func TestConvert_exponents(t *testing.T) {
	for in, want := range map[string]float64{"1e18": 1e18, "1.5e3": 1500, "2,5E-3 kg": 0.0025, "$1.2e2": 120,
		"5 EUR": 5, "3em": 3, "1e-400": 0, "-2e2": -200} {
		if got, err := ParseNumber(in); err != nil || got != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]int64{"1e18": 1_000_000_000_000_000_000, "1.5e3": 1500, "9007199254740993": 9007199254740993,
		"-9223372036854775808": -9223372036854775808, "120e-1": 12, "0.0e5": 0} {
		if got, err := ParseInteger(in); err != nil || got != want {
			t.Errorf("ParseInteger(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0x1F", "1e400", "1e999999999999"} {
		if got, err := ParseNumber(bad); err == nil {
			t.Errorf("ParseNumber(%q) = %v, want an error", bad, got)
		}
	}
	for _, bad := range []string{"0x1F", "1e19", "12345678901234567890", "1.5e0", "1e-3", "1e99999"} {
		if got, err := ParseInteger(bad); err == nil {
			t.Errorf("ParseInteger(%q) = %v, want an error", bad, got)
		}
	}

	k := compileKinds(t, map[string]jobspec.PageKind{"api": {Format: jobspec.FormatJSON, Item: true,
		Fields: map[string]jobspec.FieldRule{"big": {JSON: "big", Type: "integer"}, "text": {JSON: "text", Type: "integer"},
			"hex": {JSON: "hex", Type: "integer"}, "huge": {JSON: "huge", Type: "number"}, "thousand": {JSON: "thousand", Type: "number"}}}}).Kind("api")
	res, err := k.Extract(context.Background(), "https://example.com/api",
		[]byte(`{"big":1e18,"text":"1e18","hex":"0x1F","huge":1e400,"thousand":1.000}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"big": int64(1e18), "text": int64(1e18), "hex": nil, "huge": nil, "thousand": 1.0}
	for name, w := range want {
		if got := res.Fields[name]; got != w {
			t.Errorf("%s = %#v, want %#v", name, got, w)
		}
	}
	if len(res.FieldErrors) != 2 {
		t.Errorf("field errors %+v, want hex and huge", res.FieldErrors)
	}
}

// TestKind_Extract_linkBytes (issue 29): the links of a page are bounded
// in bytes: 50,000 short links under an 8 KB <base href> made 400 MB of
// URLs (604 MB peak in a run, 9 s before the budget stopped it); a link
// longer than a seed may be (jobspec.MaxURLBytes) is invalid.
func TestKind_Extract_linkBytes(t *testing.T) {
	page := func(baseLen, links int) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, `<html><head><base href="/%s/"></head><body>`, strings.Repeat("x", baseLen))
		for i := range links {
			fmt.Fprintf(&b, `<a href="p%d">%d</a>`, i, i)
		}
		return []byte(b.String())
	}
	k := compileKinds(t, map[string]jobspec.PageKind{"list": {Links: []jobspec.LinkRule{{CSS: "a", Kind: "list"}}}}).Kind("list")
	_, err := k.Extract(context.Background(), "https://example.com/", page(8_000, 5_000))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "links of more than") {
		t.Errorf("5,000 links of 8 KB: %v, want ErrLimit for the links' bytes", err)
	}
	res, err := k.Extract(context.Background(), "https://example.com/", page(jobspec.MaxURLBytes, 1_000))
	if err != nil || len(res.Links) != 0 || res.Invalid != 1_000 {
		t.Fatalf("links longer than %d bytes: %v, %+v; want all invalid", jobspec.MaxURLBytes, err, res)
	}
}

// TestKind_Extract_nestedText (issue 29): an element's text is charged
// before it is read: a field over every one of 400 nested divs around
// 250 KB of text read it 400 times (100 MB), uncounted.
func TestKind_Extract_nestedText(t *testing.T) {
	page := strings.Repeat("<div>", 400) + strings.Repeat("text ", 50_000) + strings.Repeat("</div>", 400)
	k := compileKinds(t, map[string]jobspec.PageKind{"p": {Item: true,
		Fields: map[string]jobspec.FieldRule{"all": {CSS: "div", All: true}}}}).Kind("p")
	k.Budget = Budget{Base: 100_000}
	if _, err := k.Extract(context.Background(), "https://example.com/", []byte(page)); !errors.Is(err, ErrLimit) {
		t.Errorf("400 nested divs of 250 KB, a budget of 100k units: %v, want ErrLimit", err)
	}
}
