package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"

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
		return CollapseSpace(s.Text())
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
	body := d.doc.Find("body").Clone()
	body.Find("script, style, noscript").Remove()
	return CollapseSpace(body.Text())
}

// CollapseSpace trims s and folds every run of white space to one space.
func CollapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
