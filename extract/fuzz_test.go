package extract

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"

	"github.com/crawler-dev/crawler/jobspec"
)

// fuzzPage is the URL every fuzzed page comes from.
const fuzzPage = "https://example.com/dir/page.html?q=1"

// FuzzDocument runs Parse, Links, Fields and Text over arbitrary bytes with
// an arbitrary selector that compiles, and checks what the master and the
// slaves rely on:
//   - Parse accepts any bytes; nothing panics;
//   - a link is non-empty, trimmed, never a javascript:, mailto:, tel:,
//     data: or fragment-only reference, and resolves against Base to an
//     absolute URL or fails to parse (the master's canonicalization then
//     keeps http(s) URLs and counts the rest as invalid);
//   - Fields returns exactly the rules' names, a string for a single rule
//     and a non-nil list without empty values for an All rule; text is
//     whitespace-collapsed; an href or src that resolves is absolute;
//   - valid UTF-8 in, valid UTF-8 out; the same calls give the same result.
//
// Run it for a bounded time with
//
//	go test -run='^$' -fuzz=FuzzDocument -fuzztime=20s ./extract/
func FuzzDocument(f *testing.F) {
	for _, name := range []string{"list.html", "detail.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, ".item a", "href", false)
		f.Add(b, "a.related", "href", true)
		f.Add(b, "#content", "", false)
		f.Add(b, "img", "src", true)
	}
	f.Add([]byte(`<base href="//cdn.example.net/a/"><a href=" x ">x</a><a href="JAVASCRIPT:1">`), "a", "href", true)
	f.Add([]byte(`<base href="javascript:alert(1)"><a href="rel">x</a>`), "a[href]", "href", false)
	f.Add([]byte("<p>a\u00a0b\u3000c</p><p>\x00\xff\xfe</p>"), "p", "", true)
	f.Add([]byte(`<table><tr><td>1<td>2</table><template><a href=/t>t</a></template>`), "td, a", "", true)
	f.Add([]byte(`<img src="data:image/png;base64,AAAA"><img src="http://[::1">`), "img:nth-child(2n+1)", "src", true)
	f.Add([]byte(`<a href="http://a b.example/">x</a><a href="%zz">y</a>`), ":not(p) > a", "href", false)
	f.Add([]byte(""), "*", "", true)

	f.Fuzz(func(t *testing.T, body []byte, css, attr string, all bool) {
		if _, err := cascadia.Compile(css); err != nil {
			return // job validation refuses selectors that do not compile
		}
		doc, err := Parse(fuzzPage, body)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if !doc.Base().IsAbs() {
			t.Fatalf("Base %q is not absolute", doc.Base())
		}
		checkLinks(t, doc, doc.Links(&jobspec.LinkRule{CSS: css, Attr: attr}))
		rules := map[string]jobspec.FieldRule{"one": {CSS: css, Attr: attr}, "all": {CSS: css, Attr: attr, All: true},
			"text": {CSS: css}, "chosen": {CSS: css, Attr: attr, All: all}}
		fields := doc.Fields(rules)
		checkFields(t, doc, rules, fields, utf8.Valid(body))
		text := doc.Text()
		if text != CollapseSpace(text) {
			t.Errorf("Text is not whitespace-collapsed: %q", text)
		}
		if utf8.Valid(body) && !utf8.Valid([]byte(text)) {
			t.Errorf("Text of valid UTF-8 is not valid UTF-8: %q", text)
		}
		if again := doc.Fields(rules); !reflect.DeepEqual(again, fields) {
			t.Errorf("Fields changed between calls: %v then %v", fields, again)
		}
		if doc.Text() != text {
			t.Error("Text changed between calls")
		}
	})
}

func checkLinks(t *testing.T, doc *Document, links []string) {
	t.Helper()
	for _, l := range links {
		if l == "" || l != strings.TrimSpace(l) {
			t.Errorf("link %q is empty or not trimmed", l)
		}
		if isNonHTTP(l) {
			t.Errorf("link %q should have been dropped", l)
		}
		if u, err := doc.Base().Parse(l); err == nil && !u.IsAbs() {
			t.Errorf("link %q resolves to %q against %q: not absolute", l, u, doc.Base())
		}
	}
}

func checkFields(t *testing.T, doc *Document, rules map[string]jobspec.FieldRule, fields map[string]any, validIn bool) {
	t.Helper()
	if len(fields) != len(rules) {
		t.Errorf("Fields returned %d fields for %d rules", len(fields), len(rules))
	}
	for name, r := range rules {
		var values []string
		switch v := fields[name].(type) {
		case string:
			if r.All {
				t.Errorf("field %s (All) is a string", name)
			}
			values = []string{v}
		case []string:
			if !r.All || v == nil {
				t.Errorf("field %s is %#v, want a string unless All, never a nil list", name, v)
			}
			for _, s := range v {
				if s == "" {
					t.Errorf("field %s lists an empty value", name)
				}
			}
			values = v
		default:
			t.Errorf("field %s is %T", name, v)
		}
		for _, v := range values {
			checkValue(t, doc, name, r.Attr, v)
			if validIn && !utf8.ValidString(v) {
				t.Errorf("field %s of valid UTF-8 is not valid UTF-8: %q", name, v)
			}
		}
	}
}

func checkValue(t *testing.T, doc *Document, name, attr, v string) {
	t.Helper()
	if attr == "" && v != CollapseSpace(v) {
		t.Errorf("field %s text %q is not whitespace-collapsed", name, v)
	}
	if attr != "" && v != strings.TrimSpace(v) {
		t.Errorf("field %s attribute %q is not trimmed", name, v)
	}
	if (attr == "href" || attr == "src") && v != "" {
		if _, err := doc.Base().Parse(v); err == nil {
			if u, err := url.Parse(v); err != nil || !u.IsAbs() {
				t.Errorf("field %s %s %q resolves but is not kept absolute", name, attr, v)
			}
		}
	}
}
