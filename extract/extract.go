package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawler-dev/crawler/cluster"
)

// Document is a parsed page and the URL it came from.
type Document struct {
	doc  *goquery.Document
	base *url.URL
}

// Parse parses an HTML page fetched from pageURL. A <base href> in the page
// changes the base that relative links are resolved against.
func Parse(pageURL string, body []byte) (*Document, error) {
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("parse page url %q: %w", pageURL, err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse html of %s: %w", pageURL, err)
	}
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if b, err := base.Parse(strings.TrimSpace(href)); err == nil {
			base = b
		}
	}
	return &Document{doc: doc, base: base}, nil
}

// Base is the URL relative links are resolved against.
func (d *Document) Base() *url.URL { return d.base }

// Links returns the raw attribute values selected by rule, in document
// order, without empty values, javascript: and mailto: links. They are not
// yet resolved: callers canonicalize them against Base.
func (d *Document) Links(rule *cluster.LinkRule) []string {
	if rule == nil {
		return nil
	}
	attr := rule.Attr
	if attr == "" {
		attr = "href"
	}
	var out []string
	d.doc.Find(rule.CSS).Each(func(_ int, s *goquery.Selection) {
		v, ok := s.Attr(attr)
		v = strings.TrimSpace(v)
		if !ok || v == "" || isNonHTTP(v) {
			return
		}
		out = append(out, v)
	})
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
// look like URLs (href, src) are resolved to absolute URLs.
func (d *Document) Fields(rules map[string]cluster.FieldRule) map[string]any {
	out := make(map[string]any, len(rules))
	for name, r := range rules {
		sel := d.doc.Find(r.CSS)
		if r.All {
			vals := []string{}
			sel.Each(func(_ int, s *goquery.Selection) {
				if v := d.value(s, r.Attr); v != "" {
					vals = append(vals, v)
				}
			})
			out[name] = vals
			continue
		}
		out[name] = d.value(sel.First(), r.Attr)
	}
	return out
}

func (d *Document) value(s *goquery.Selection, attr string) string {
	if s.Length() == 0 {
		return ""
	}
	if attr == "" {
		return textOf(s, false)
	}
	v := strings.TrimSpace(s.AttrOr(attr, ""))
	if v != "" && (attr == "href" || attr == "src") {
		if u, err := d.base.Parse(v); err == nil {
			return u.String()
		}
	}
	return v
}

// Text returns the visible text of the whole body, whitespace collapsed.
func (d *Document) Text() string {
	return textOf(d.doc.Find("body"), true)
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

// textOf returns the text of s's nodes with block boundaries as spaces and
// whitespace collapsed; hidden drops script, style, noscript and template
// content below them.
func textOf(s *goquery.Selection, hidden bool) string {
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
	for _, n := range s.Nodes {
		walk(n)
	}
	return CollapseSpace(b.String())
}

// CollapseSpace trims s and folds every run of white space to one space.
func CollapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
