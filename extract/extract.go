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

	"github.com/crawler-dev/crawler/jobspec"
)

// Document is a parsed HTML page and the URL it came from.
type Document struct {
	root *html.Node
	t    *tree
	base *url.URL
	// legacy is the page of the Links and Fields calls, which share one
	// budget.
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

// ParseContext is Parse for a page whose Links and Fields calls stop
// when ctx is done: a process that is stopping does not finish a page's
// extraction (Err then reports ctx's error).
func ParseContext(ctx context.Context, pageURL string, body []byte) (*Document, error) {
	d, err := Parse(pageURL, body)
	if err != nil {
		return nil, err
	}
	d.legacy = d.page(ctx, DefaultBudget)
	return d, nil
}

// Base is the URL relative links are resolved against.
func (d *Document) Base() *url.URL { return d.base }

// Elements is the number of elements of the page.
func (d *Document) Elements() int { return len(d.t.nodes) }

// page returns a page over the document with a meter of its own.
func (d *Document) page(ctx context.Context, b Budget) *page {
	m := newMeter(ctx, b.limit(len(d.t.nodes)))
	return &page{base: d.base, t: d.t, m: m, css: newCSSEval(d.t, m)}
}

// legacyPage is the page the Links and Fields calls share, with
// DefaultBudget.
func (d *Document) legacyPage() *page {
	if d.legacy == nil {
		d.legacy = d.page(context.Background(), DefaultBudget)
	}
	return d.legacy
}

// Err reports why a Links or Fields call returned nothing: ErrLimit when
// the calls on this document passed DefaultBudget, or the error of the
// context given to ParseContext once it is done. A caller fails the page
// (FailureKind names the failure) rather than keep what the calls gave.
func (d *Document) Err() error {
	if d.legacy == nil {
		return nil
	}
	return d.legacy.m.err
}

// Links returns the raw attribute values selected by rule, in document
// order, without empty values, javascript: and mailto: links and those
// the rule's allow or deny leaves out. They are not yet resolved: callers
// canonicalize them against Base. A rule that does not compile, or work
// past the document's budget (see Err), gives none.
func (d *Document) Links(rule *jobspec.LinkRule) []string {
	if rule == nil {
		return nil
	}
	l, err := compileLink(*rule)
	if err != nil {
		return nil
	}
	p := d.legacyPage()
	refs, err := p.rawLinks(l)
	if err != nil {
		return nil
	}
	out := refs[:0]
	for _, ref := range refs {
		abs, err := d.base.Parse(ref)
		if err != nil {
			out = append(out, ref)
			continue
		}
		admitted, err := p.admits(l, abs.String())
		if err != nil {
			return nil
		}
		if admitted {
			out = append(out, ref)
		}
	}
	return out
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

// Fields extracts a job's fields: a string for a single match (empty when
// nothing matches), a []string for a rule with All. Attribute values that
// look like URLs (href, src) are resolved to absolute URLs. A rule with a
// type gives its converted value (see Result.Fields); conversion errors
// and missing required fields are not reported here: Kind.Extract reports
// them.
func (d *Document) Fields(rules map[string]jobspec.FieldRule) map[string]any {
	out := make(map[string]any, len(rules))
	res := &Result{Fields: out}
	p := d.legacyPage()
	for name, r := range rules {
		f, err := compileField(name, r)
		if err != nil || p.field(f, res) != nil {
			out[name] = emptyValue(r)
		}
	}
	return out
}

// emptyValue is a field's value when nothing could be selected.
func emptyValue(r jobspec.FieldRule) any {
	switch {
	case r.All && (r.Type == "" || r.Type == jobspec.TypeString):
		return []string{}
	case r.All:
		return []any{}
	case r.Type == "" || r.Type == jobspec.TypeString:
		return ""
	}
	return nil
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
