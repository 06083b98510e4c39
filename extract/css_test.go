package extract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// cssCorpus is a set of selectors of every shape cascadia accepts:
// combinators, relative pseudo-classes with combinators inside, escapes,
// strings and regular expressions that hide commas, spaces and
// parentheses.
var cssCorpus = []string{
	"*", "a", "h1", ".item a", "#content", "div > p", "p + p", "h1 ~ p", "li:nth-child(2n+1)",
	".item a, a.next", "a[href]", `a[href^="/detail"]`, `a[href*=", ) ("]`, `a[title="a b > c"]`,
	"a[href#=(detail/\\d+)]", ":not(p)", "div:not(.a .b)", "div:has(a.related)", "div:has(> p)",
	"ul:haschild(li)", "p:contains(\"one, two\")", "p:containsOwn(First)", "p:matches(^\\w+ (a|b))",
	"div :not(:has(p span)) a", "body  >  div   p", "div/* comment */p", "li:first-child, li:last-of-type",
	"li:only-child", ":empty", ":root > body", "p:lang(en)", "input:checked, :disabled", `\.x`,
	`.a\:b`, `.\31 23`, "div.card:not(.ad):not(.promo) > a", "a:not([href^=http])", "[data-x~=y]",
	"div p:nth-last-child(1) ~ span", "td:nth-of-type(odd)", "table tr > td + td", "a:link",
	":is(p)", "div:has(p, span) > span", "p:not(:contains(x), .y)", `:ContAins("")`, ":matches(.*)",
}

// cssPages are the pages the corpus is run on.
func cssPages(t testing.TB) map[string][]byte {
	pages := map[string][]byte{
		"nested": []byte(strings.Repeat("<div class=a>", 30) + "<p class=b>one, two <span>x</span></p><a class=related href=/r>r</a>" + strings.Repeat("</div>", 30)),
		"lists": []byte(`<html lang=en><body><ul><li>1</li><li class="x y">2</li><li>3</li></ul><ul><li>only</li></ul>
			<table><tr><td>1</td><td>2</td><td>3</td></tr></table><p></p><input type=checkbox checked><button disabled>b</button>
			<div class="card promo"><a href="http://x/">x</a></div><div class=card><a href="/detail/7">d</a></div>
			<p>First paragraph</p><p>a (b) ) c</p><span>s</span><div data-x="q y z"><p>the p</p><span>t</span></div>
			<a href="/detail/12" title="a b > c">t</a><a class=".x">dot</a><div class="a:b">colon</div><div class="123">num</div></body></html>`),
		"empty": []byte(""),
	}
	for _, name := range []string{"list.html", "detail.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = b
	}
	return pages
}

// TestCSS_sameAsCascadia: the set-at-a-time evaluation selects exactly the
// elements cascadia selects, in the same order.
func TestCSS_sameAsCascadia(t *testing.T) {
	for name, page := range cssPages(t) {
		root, err := html.Parse(strings.NewReader(string(page)))
		if err != nil {
			t.Fatal(err)
		}
		tr := newTree(root)
		for _, sel := range cssCorpus {
			want, err := cascadia.Compile(sel)
			if err != nil {
				if _, ours := compileCSS(sel); ours == nil {
					t.Errorf("%q: cascadia refuses it (%v) but compileCSS accepts it", sel, err)
				}
				continue
			}
			got, err := compileCSS(sel)
			if err != nil {
				t.Errorf("%q: %v", sel, err)
				continue
			}
			nodes, ok := newCSSEval(tr, newMeter(context.Background(), DefaultBudget.limit(len(tr.nodes)))).selectAll(got)
			if !ok {
				t.Errorf("%s %q: the meter stopped it", name, sel)
			}
			if w := cascadiaElements(want, root); !sameNodes(nodes, w) {
				t.Errorf("%s %q: selected %s, cascadia %s", name, sel, describe(nodes), describe(w))
			}
		}
	}
}

// cascadiaElements is what cascadia selects under root, elements only: a
// pseudo-class such as :contains("") alone also matches the document node
// itself, while a selection (ours, and goquery's Find) holds elements.
func cascadiaElements(sel cascadia.Selector, root *html.Node) []*html.Node {
	var out []*html.Node
	for _, n := range sel.MatchAll(root) {
		if n.Type == html.ElementNode {
			out = append(out, n)
		}
	}
	return out
}

func sameNodes(a, b []*html.Node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func describe(nodes []*html.Node) string {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, "<%s>", n.Data)
	}
	return fmt.Sprintf("%d %s", len(nodes), b.String())
}

// hostilePage is issue 18's page: n nested <div> around a link, on which
// cascadia takes ~n^6 steps for "p div div div div div a" (53 s at
// n = 100): for the link it tries every chain of five div ancestors in
// search of a p above them.
func hostilePage(n int) []byte {
	return []byte("<html><body>" + strings.Repeat("<div>", n) + `<a href="/x">x</a>` + strings.Repeat("</div>", n) + "</body></html>")
}

const hostileSelector = "p div div div div div a"

// TestCSS_hostilePage: the selector completes on the hostile page at 100
// and 300 levels, with a work count linear in the page.
func TestCSS_hostilePage(t *testing.T) {
	for _, n := range []int{100, 300} {
		root, err := html.Parse(strings.NewReader(string(hostilePage(n))))
		if err != nil {
			t.Fatal(err)
		}
		tr := newTree(root)
		sel, err := compileCSS(hostileSelector)
		if err != nil {
			t.Fatal(err)
		}
		m := newMeter(context.Background(), DefaultBudget.limit(len(tr.nodes)))
		nodes, ok := newCSSEval(tr, m).selectAll(sel)
		if !ok || len(nodes) != 0 {
			t.Errorf("n=%d: selected %d nodes, ok %v; want none", n, len(nodes), ok)
		}
		// 7 compounds: one pass each, plus one match per candidate.
		if bound := int64(2 * 7 * len(tr.nodes)); m.used > bound {
			t.Errorf("n=%d: %d units of work, want at most %d (linear in %d elements)", n, m.used, bound, len(tr.nodes))
		}
	}
}

// TestCSS_limit: a selector whose cost is not linear (text pseudo-classes
// over a deep tree with a big text) stops at the budget with ErrLimit,
// and a cancelled context stops the work too.
func TestCSS_limit(t *testing.T) {
	page := strings.Repeat("<div>", 400) + strings.Repeat("lorem ipsum ", 100_000) + strings.Repeat("</div>", 400)
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTree(root)
	sel, err := compileCSS(`div:contains("nothing like this")`)
	if err != nil {
		t.Fatal(err)
	}
	limit := DefaultBudget.limit(len(tr.nodes))
	m := newMeter(context.Background(), limit)
	if _, ok := newCSSEval(tr, m).selectAll(sel); ok || !errors.Is(m.err, ErrLimit) {
		t.Errorf("selectAll = %v, meter error %v; want it stopped with ErrLimit", ok, m.err)
	}
	if m.used > limit+int64(tr.text[0]) {
		t.Errorf("used %d units past the limit %d by more than one element's charge", m.used, limit)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m = newMeter(ctx, 1<<62)
	if _, ok := newCSSEval(tr, m).selectAll(sel); ok || !errors.Is(m.err, context.Canceled) {
		t.Errorf("selectAll with a cancelled context = %v, %v; want it stopped", ok, m.err)
	}
}

// FuzzCSS checks the set-at-a-time evaluation against cascadia on
// arbitrary pages and selectors: whatever cascadia accepts compiles, and
// selects the same elements in the same order. Run it with
//
//	go test -run='^$' -fuzz=FuzzCSS -fuzztime=30s ./extract/
func FuzzCSS(f *testing.F) {
	for _, page := range cssPages(f) {
		for _, sel := range cssCorpus {
			f.Add(page, sel)
		}
	}
	f.Fuzz(func(t *testing.T, page []byte, sel string) {
		want, err := cascadia.Compile(sel)
		if err != nil || len(page) > 1<<14 {
			return
		}
		got, err := compileCSS(sel)
		if err != nil {
			t.Fatalf("%q: cascadia accepts it, compileCSS: %v", sel, err)
		}
		root, err := html.Parse(strings.NewReader(string(page)))
		if err != nil {
			return
		}
		tr := newTree(root)
		nodes, ok := newCSSEval(tr, newMeter(context.Background(), 1<<40)).selectAll(got)
		if w := cascadiaElements(want, root); !ok || !sameNodes(nodes, w) {
			t.Fatalf("%q on %q: selected %s, cascadia %s", sel, page, describe(nodes), describe(w))
		}
	})
}

// selectAll returns the elements matching sel, in document order; on
// false the meter stopped the work (the tests' view of selectPositions).
func (e *cssEval) selectAll(sel *cssSelector) ([]*html.Node, bool) {
	els, ok := e.selectPositions(sel)
	if !ok {
		return nil, false
	}
	out := make([]*html.Node, len(els))
	for i, el := range els {
		out[i] = e.t.nodes[el]
	}
	return out, true
}
