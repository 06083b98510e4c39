package extract

import (
	"strings"

	"github.com/tidwall/gjson"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// jsonValues returns the values at a gjson path of a JSON document: a
// list at the path gives its elements (so "items.#.url" gives each
// item's url), anything else itself; nothing when the path resolves to
// nothing.
func jsonValues(doc []byte, path string) []gjson.Result {
	return flatten(gjson.GetBytes(doc, path))
}

func flatten(r gjson.Result) []gjson.Result {
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	if r.IsArray() {
		var out []gjson.Result
		for _, e := range r.Array() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []gjson.Result{r}
}

// jsonText is a JSON value as field text: a string as itself, a number,
// boolean, object or list as its JSON.
func jsonText(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	return r.Raw
}

// jsonLD returns the JSON-LD objects of a page, in document order: each
// <script type="application/ld+json"> block that is valid JSON, each
// element of a block that is a list, and each element of a block's
// @graph, after the block itself.
func jsonLD(t *tree) []string {
	var out []string
	for _, n := range t.nodes {
		if n.DataAtom != atom.Script || !isJSONLD(n) {
			continue
		}
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		block := strings.TrimSpace(b.String())
		if !gjson.Valid(block) {
			continue
		}
		out = append(out, ldObjects(gjson.Parse(block))...)
	}
	return out
}

// ldObjects is a block's objects: a list's elements, an object and the
// elements of its @graph.
func ldObjects(r gjson.Result) []string {
	if r.IsArray() {
		var out []string
		for _, e := range r.Array() {
			out = append(out, ldObjects(e)...)
		}
		return out
	}
	if !r.IsObject() {
		return nil
	}
	out := []string{r.Raw}
	if g := r.Get(`\@graph`); g.IsArray() {
		for _, e := range g.Array() {
			out = append(out, ldObjects(e)...)
		}
	}
	return out
}

func isJSONLD(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "type" {
			t, _, _ := strings.Cut(a.Val, ";")
			return strings.EqualFold(strings.TrimSpace(t), "application/ld+json")
		}
	}
	return false
}

// jsonLDValues returns the values at path in the first JSON-LD object
// where it resolves.
func jsonLDValues(objects []string, path string) []gjson.Result {
	for _, o := range objects {
		if vals := flatten(gjson.Get(o, path)); len(vals) > 0 {
			return vals
		}
	}
	return nil
}
