package extract

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Document is a parsed HTML page and the URL it came from.
type Document struct {
	root *html.Node
	t    *tree
	base *url.URL
	// ctx is ParseContext's, for the Links and Fields calls of the
	// tests; legacy is the page those calls share, with one budget.
	ctx    context.Context
	legacy *page
}

// Parse parses an HTML page fetched from pageURL. A <base href> in the page
// changes the base that relative links are resolved against.
func Parse(pageURL string, body []byte) (*Document, error) {
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("parse page url %q: %w", pageURL, err)
	}
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse html of %s: %w", pageURL, err)
	}
	d := &Document{root: root, t: newTree(root), base: base}
	for _, n := range d.t.nodes {
		if n.DataAtom != atom.Base {
			continue
		}
		if href, ok := attrOf(n, "href"); ok {
			if b, err := base.Parse(strings.TrimSpace(href)); err == nil {
				d.base = b
			}
			break
		}
	}
	return d, nil
}

// ParseContext is Parse for a page whose extraction stops when ctx is
// done: a process that is stopping does not finish a page's extraction.
func ParseContext(ctx context.Context, pageURL string, body []byte) (*Document, error) {
	d, err := Parse(pageURL, body)
	if err != nil {
		return nil, err
	}
	d.ctx = ctx
	return d, nil
}

// page returns a page over the document with a meter of its own.
func (d *Document) page(ctx context.Context, b Budget) *page {
	m := newMeter(ctx, b.limit(len(d.t.nodes)))
	return &page{base: d.base, t: d.t, m: m, css: newCSSEval(d.t, m)}
}

func isNonHTTP(ref string) bool {
	lower := strings.ToLower(ref)
	for _, p := range []string{"javascript:", "mailto:", "tel:", "data:", "#"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}

// Text returns the visible text of the whole body, whitespace collapsed.
func (d *Document) Text() string {
	for _, n := range d.t.nodes {
		if n.DataAtom == atom.Body {
			return textOf([]*html.Node{n}, true)
		}
	}
	return ""
}

// blockElements end a run of words: the text on either side of them is
// separated by a space, as a browser shows it ("<p>a</p><p>b</p>" is
// "a b", not "ab"). Inline elements join ("a<b>b</b>" is "ab").
var blockElements = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Br: true,
	atom.Caption: true, atom.Dd: true, atom.Details: true, atom.Dialog: true, atom.Div: true,
	atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Header: true, atom.Hr: true, atom.Li: true, atom.Main: true,
	atom.Nav: true, atom.Ol: true, atom.Option: true, atom.P: true, atom.Pre: true, atom.Section: true,
	atom.Summary: true, atom.Table: true, atom.Td: true, atom.Th: true, atom.Tr: true, atom.Ul: true,
}

// textOf returns the text of nodes with block boundaries as spaces and
// whitespace collapsed; hidden drops script, style, noscript and template
// content below them.
func textOf(nodes []*html.Node, hidden bool) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			if hidden {
				switch n.DataAtom {
				case atom.Script, atom.Style, atom.Noscript, atom.Template:
					return
				}
			}
			if blockElements[n.DataAtom] {
				b.WriteByte(' ')
				defer b.WriteByte(' ')
			}
		case html.CommentNode, html.DoctypeNode:
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return CollapseSpace(b.String())
}

// CollapseSpace trims s and folds every run of white space to one space.
func CollapseSpace(s string) string {
	if collapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

// collapsed reports whether s is ASCII whose only white space is single
// spaces between words: CollapseSpace would give it back unchanged.
func collapsed(s string) bool {
	prevSpace := true // at the start, a space would be leading
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return false
		case c == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		default:
			prevSpace = false
		}
	}
	return !prevSpace || s == ""
}
