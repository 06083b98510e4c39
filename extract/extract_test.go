package extract

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/jobspec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got, as indented JSON, with testdata/name; -update
// rewrites the file instead.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if string(b) != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n got %s\nwant %s", path, b, want)
	}
}

func parseFile(t *testing.T, pageURL, name string) *Document {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Parse(pageURL, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return doc
}

func parse(t *testing.T, pageURL, body string) *Document {
	t.Helper()
	doc, err := Parse(pageURL, []byte(body))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return doc
}

// detailRules are the contract's example fields plus the edge cases.
var detailRules = map[string]jobspec.FieldRule{
	"title":       {CSS: "h1"},
	"body":        {CSS: "#content"},
	"tags":        {CSS: ".tag", All: true},
	"image":       {CSS: "img.main", Attr: "src"},
	"thumb":       {CSS: "img.thumb", Attr: "src"},
	"source":      {CSS: "a.source", Attr: "href"},
	"related":     {CSS: "a.related", Attr: "href", All: true},
	"price":       {CSS: ".price", Attr: "data-value"},
	"first_tag":   {CSS: ".tag"},
	"missing":     {CSS: ".nothing"},
	"missing_all": {CSS: ".nothing", All: true},
	"missing_src": {CSS: "img.nothing", Attr: "src"},
	"no_attr":     {CSS: "h1", Attr: "data-x"},
}

func TestDocument_golden(t *testing.T) {
	t.Run("list page links", func(t *testing.T) {
		doc := parseFile(t, "https://example.com/list/2", "list.html")
		golden(t, "list.links.golden.json", map[string][]string{
			"detail_link":    doc.Links(&jobspec.LinkRule{CSS: ".item a", Attr: "href"}),
			"next_link":      doc.Links(&jobspec.LinkRule{CSS: "a.next"}),
			"next_link_data": doc.Links(&jobspec.LinkRule{CSS: "a.next", Attr: "data-href"}),
		})
	})
	t.Run("detail page fields and text", func(t *testing.T) {
		doc := parseFile(t, "https://example.com/detail/7?cat=tech", "detail.html")
		golden(t, "detail.fields.golden.json", map[string]any{
			"fields": doc.Fields(detailRules),
			"text":   doc.Text(),
		})
	})
}

func TestDocument_Links(t *testing.T) {
	doc := parseFile(t, "https://example.com/list/2", "list.html")
	got := doc.Links(&jobspec.LinkRule{CSS: ".item a", Attr: "href"})
	want := []string{"/detail/1?cat=a", "../detail/2", "https://other.example.org/x", "detail/3#c", "//cdn.example.com/detail/4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %q\nwant %q", got, want)
	}
	if got := doc.Links(nil); got != nil {
		t.Errorf("Links(nil) = %q, want nil", got)
	}
	if got := doc.Links(&jobspec.LinkRule{CSS: ".nothing"}); len(got) != 0 {
		t.Errorf("Links(.nothing) = %q, want none", got)
	}
}

func TestParse_base(t *testing.T) {
	for _, tc := range []struct {
		name, page, html, want string
	}{
		{"no base", "https://example.com/a/b/page.html", `<a href="x">x</a>`, "https://example.com/a/b/page.html"},
		{"absolute base", "https://example.com/a/", `<head><base href="https://cdn.example.net/root/"></head>`, "https://cdn.example.net/root/"},
		{"relative base", "https://example.com/a/b/", `<head><base href=" /other/dir/ "></head>`, "https://example.com/other/dir/"},
		{"first base wins", "https://example.com/", `<head><base href="/one/"><base href="/two/"></head>`, "https://example.com/one/"},
		{"base without href", "https://example.com/p", `<head><base target="_blank"></head>`, "https://example.com/p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse(t, tc.page, tc.html)
			if got := doc.Base().String(); got != tc.want {
				t.Errorf("Base = %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("base resolves src and href fields", func(t *testing.T) {
		doc := parse(t, "https://example.com/news/1", `<head><base href="https://cdn.example.net/assets/"></head>
			<body><img class="main" src="7.jpg"><a class="s" href="../up">s</a></body>`)
		got := doc.Fields(map[string]jobspec.FieldRule{"image": {CSS: "img.main", Attr: "src"}, "s": {CSS: "a.s", Attr: "href"}})
		want := map[string]any{"image": "https://cdn.example.net/assets/7.jpg", "s": "https://cdn.example.net/up"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fields = %v, want %v", got, want)
		}
	})
	t.Run("bad page url", func(t *testing.T) {
		if _, err := Parse("http://[::1", []byte("<p>x</p>")); err == nil || !strings.Contains(err.Error(), "page url") {
			t.Errorf("Parse(bad url) = %v, want an error about the page url", err)
		}
	})
}

func TestDocument_Fields(t *testing.T) {
	doc := parseFile(t, "https://example.com/detail/7?cat=tech", "detail.html")
	got := doc.Fields(detailRules)
	want := map[string]any{
		"title":       "Item 7: river",
		"body":        "First paragraph. Second paragraph with bold and a link. one two line break",
		"tags":        []string{"world", "science"},
		"image":       "https://example.com/detail/img/7.jpg",
		"thumb":       "https://static.example.com/t/7.jpg",
		"source":      "https://example.com/sources/7",
		"related":     []string{"https://example.com/detail/8", "https://example.com/detail/detail/9?x=1"},
		"price":       "12.50",
		"first_tag":   "world",
		"missing":     "",
		"missing_all": []string{},
		"missing_src": "",
		"no_attr":     "",
	}
	for name, w := range want {
		if g := got[name]; !reflect.DeepEqual(g, w) {
			t.Errorf("field %s = %#v, want %#v", name, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Fields returned %d fields, want %d", len(got), len(want))
	}
	if b, _ := json.Marshal(got["missing_all"]); string(b) != "[]" {
		t.Errorf("missing list encodes as %s, want [] (not null)", b)
	}
}

func TestDocument_Text(t *testing.T) {
	doc := parseFile(t, "https://example.com/detail/7", "detail.html")
	got := doc.Text()
	for _, banned := range []string{"ignored", "script text", "tracking", "color", "enable javascript"} {
		if strings.Contains(got, banned) {
			t.Errorf("Text contains %q from a script, style or noscript: %q", banned, got)
		}
	}
	want := "Item 7: river First paragraph. Second paragraph with bold and a link. one two line break world science source eight nine twelve fifty"
	if got != want {
		t.Errorf("Text =\n %q\nwant\n %q", got, want)
	}
	t.Run("does not change the document", func(t *testing.T) {
		if g := doc.Fields(map[string]jobspec.FieldRule{"s": {CSS: "body > script"}})["s"]; g != `document.write("tracking");` {
			t.Errorf("script after Text = %q, want it still there", g)
		}
	})
}

func TestDocument_Fields_textBoundaries(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		{"inline joins", `<div id="x">hel<b>lo</b> <i>wor</i>ld</div>`, "hello world"},
		{"paragraphs split", `<div id="x"><p>a.</p><p>b.</p></div>`, "a. b."},
		{"list items split", `<ul id="x"><li>one</li><li>two</li></ul>`, "one two"},
		{"br splits", `<p id="x">line<br>break</p>`, "line break"},
		{"cells split", `<table id="x"><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table>`, "1 2 3"},
		{"comments dropped", `<p id="x">a<!-- hidden -->b</p>`, "ab"},
		{"CJK keeps no spaces", `<p id="x">城市<b>经济</b></p>`, "城市经济"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse(t, "https://example.com/", tc.html)
			if got := doc.Fields(map[string]jobspec.FieldRule{"x": {CSS: "#x"}})["x"]; got != tc.want {
				t.Errorf("text = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCollapseSpace(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"  a  ":              "a",
		"a\n\t b\r\nc":       "a b c",
		"non\u00a0breaking ": "non breaking",
		"城市  经济":             "城市 经济",
	} {
		if got := CollapseSpace(in); got != want {
			t.Errorf("CollapseSpace(%q) = %q, want %q", in, got, want)
		}
	}
}
