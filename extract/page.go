package extract

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
	"golang.org/x/net/html"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/jobspec"
)

// page is one page being extracted: its HTML tree (or JSON body), the
// base its links resolve against, and the meter its work is charged to.
type page struct {
	base *url.URL
	t    *tree  // nil for a JSON page
	json string // a JSON page's body
	m    *meter
	css  *cssEval
	ld   []string // the page's JSON-LD objects, once read
	read bool     // ld has been read
	// linkBytes are the bytes of the links kept so far (MaxPageLinkBytes).
	linkBytes int
}

// MaxPageLinkBytes bounds the bytes of the links one page yields: a list
// page of 50,000 short links under an 8 KB <base href> made 400 MB of
// URLs. Past it the page fails with ErrLimit.
const MaxPageLinkBytes = 16 << 20

// errNotJSON is returned for a JSON kind's page that is not JSON.
var errNotJSON = errors.New("the page is not JSON")

// openJSON opens a JSON page. Its nesting is checked, in one pass without
// recursion, before gjson's validation, which recurses once per level.
func openJSON(ctx context.Context, pageURL string, body []byte, b Budget) (*page, error) {
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("parse page url %q: %w", pageURL, err)
	}
	if err := checkDepth(body); err != nil {
		return nil, fmt.Errorf("%s: %w", pageURL, err)
	}
	if !gjson.ValidBytes(body) {
		return nil, fmt.Errorf("%s: %w", pageURL, errNotJSON)
	}
	m := newMeter(ctx, b.limit(len(body)/16))
	m.charge(2 * docCost(len(body))) // the two passes above
	return &page{base: base, json: string(body), m: m}, nil
}

// selectorRule is a compiled selector: exactly one of its fields is set.
type selectorRule struct {
	css    *cssSelector
	xpath  *xpathRule
	json   string
	jsonld string
}

func compileSelector(css, xp, jsonPath, jsonld string) (selectorRule, error) {
	switch {
	case css != "":
		sel, err := compileCSS(css)
		if err != nil {
			return selectorRule{}, fmt.Errorf("css: %w", err)
		}
		return selectorRule{css: sel}, nil
	case xp != "":
		e, err := compileXPath(xp)
		if err != nil {
			return selectorRule{}, fmt.Errorf("xpath: %w", err)
		}
		return selectorRule{xpath: e}, nil
	case jsonPath != "":
		if err := jobspec.CheckJSONPath(jsonPath); err != nil {
			return selectorRule{}, fmt.Errorf("json: %w", err)
		}
		return selectorRule{json: jsonPath}, nil
	case jsonld != "":
		if err := jobspec.CheckJSONPath(jsonld); err != nil {
			return selectorRule{}, fmt.Errorf("jsonld: %w", err)
		}
		return selectorRule{jsonld: jsonld}, nil
	}
	return selectorRule{}, errors.New("css: selector is empty")
}

// value is one selected value: its text, and for a JSON value whether it
// is a JSON number (read as one, not as text).
type value struct {
	text string
	num  bool
}

// selectValues returns what sel selects on the page, in document order:
// elements give their attribute attr, or their text when attr is "".
func (p *page) selectValues(sel selectorRule, attr string) ([]value, error) {
	if sel.json != "" || sel.jsonld != "" {
		return p.jsonSelect(sel)
	}
	items, err := p.selectItems(sel)
	if err != nil {
		return nil, err
	}
	out := make([]value, 0, len(items))
	for _, it := range items {
		if !p.m.charge(p.valueCost(it, attr)) {
			return nil, p.m.err
		}
		out = append(out, value{text: p.itemValue(it, attr)})
	}
	return out, nil
}

// valueCost is the charge for reading one selected value before it is
// read: an element's text is all the text below it, which nested
// elements repeat (a field over 400 nested divs around 10 MB of text
// would be 4 GB).
func (p *page) valueCost(it xpathItem, attr string) int64 {
	if it.node != nil && it.attr < 0 && attr == "" && it.node.Type == html.ElementNode {
		if it.el > 0 { // a CSS selector's element, by position
			return docCost(int(p.t.text[it.el-1]))
		}
		if i, ok := p.t.indexOf(it.node); ok {
			return docCost(int(p.t.text[i]))
		}
	}
	return 1
}

// selectItems evaluates a css or xpath selector: the nodes (or XPath
// values) it selects, in document order.
func (p *page) selectItems(sel selectorRule) ([]xpathItem, error) {
	switch {
	case p.t == nil:
		return nil, errors.New("css and xpath selectors read HTML pages, not JSON")
	case sel.css != nil:
		els, ok := p.css.selectPositions(sel.css)
		if !ok {
			return nil, p.m.err
		}
		items := make([]xpathItem, len(els))
		for i, el := range els {
			items[i] = xpathItem{node: p.t.nodes[el], attr: -1, el: el + 1}
		}
		return items, nil
	}
	items, ok := evalXPath(sel.xpath, p.t, p.m)
	if !ok {
		return nil, p.m.err
	}
	return items, nil
}

// jsonSelect reads a json path of a JSON page or a jsonld path of an HTML
// page's JSON-LD.
func (p *page) jsonSelect(sel selectorRule) ([]value, error) {
	if sel.json != "" {
		if p.t != nil {
			return nil, errors.New("json paths read JSON pages (format: json)")
		}
		return p.jsonPathValues(p.json, sel.json)
	}
	if p.t == nil {
		return nil, errors.New("jsonld paths read HTML pages")
	}
	return p.jsonLDValues(sel.jsonld)
}

// nodeValue is an element's text, or its attribute attr trimmed (href and
// src made absolute).
func (p *page) nodeValue(n *html.Node, attr string) string {
	if attr == "" {
		return textOf([]*html.Node{n}, false)
	}
	for _, a := range n.Attr {
		if a.Key == attr {
			return p.attrValue(attr, a.Val)
		}
	}
	return ""
}

// attrValue trims an attribute's value and makes href and src absolute.
func (p *page) attrValue(key, v string) string {
	v = strings.TrimSpace(v)
	if v != "" && (key == "href" || key == "src") {
		if u, err := p.base.Parse(v); err == nil {
			return u.String()
		}
	}
	return v
}

// itemValue is the value of one XPath result.
func (p *page) itemValue(it xpathItem, attr string) string {
	switch {
	case it.node == nil:
		return strings.TrimSpace(it.scalar)
	case it.attr >= 0:
		a := it.node.Attr[it.attr]
		return p.attrValue(a.Key, a.Val)
	case it.node.Type == html.ElementNode:
		return p.nodeValue(it.node, attr)
	}
	return CollapseSpace(it.node.Data)
}

// linkRule is a compiled link rule.
type linkRule struct {
	index       int
	priority    int // of the pages it finds (jobspec.LinkPriority)
	spec        jobspec.LinkRule
	sel         selectorRule
	attr        string
	allow, deny *pattern
}

func compileLink(l jobspec.LinkRule) (*linkRule, error) {
	sel, err := compileSelector(l.CSS, l.XPath, l.JSON, "")
	if err != nil {
		return nil, err
	}
	r := &linkRule{spec: l, sel: sel, attr: l.Attr}
	if r.attr == "" {
		r.attr = "href"
	}
	if r.allow, err = compilePattern("allow", l.Allow); err != nil {
		return nil, err
	}
	if r.deny, err = compilePattern("deny", l.Deny); err != nil {
		return nil, err
	}
	return r, nil
}

// rawLinks returns the references a link rule selects, trimmed, as
// written (not yet resolved), without empty ones and javascript:,
// mailto:, tel:, data: and #fragment links.
func (p *page) rawLinks(l *linkRule) ([]string, error) {
	var refs []string
	if l.sel.json != "" {
		vals, err := p.jsonSelect(l.sel)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			refs = append(refs, v.text)
		}
	} else {
		items, err := p.selectItems(l.sel)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if v, ok := linkRef(it, l.attr); ok {
				refs = append(refs, v)
			}
		}
	}
	out := refs[:0]
	for _, v := range refs {
		if v = strings.TrimSpace(v); v != "" && !isNonHTTP(v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// linkRef is the reference one selected node holds: an element's
// attribute attr, an attribute's or text's value.
func linkRef(it xpathItem, attr string) (string, bool) {
	switch {
	case it.node == nil:
		return it.scalar, true
	case it.attr >= 0:
		return it.node.Attr[it.attr].Val, true
	case it.node.Type == html.ElementNode:
		return attrOf(it.node, attr)
	}
	return it.node.Data, true
}

func attrOf(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// links adds what one rule finds to res: resolved, filtered by allow and
// deny, canonicalized, each URL once per page.
func (p *page) links(l *linkRule, res *Result, seen map[string]bool) error {
	refs, err := p.rawLinks(l)
	if err != nil {
		return err
	}
	res.Found[l.index] = len(refs)
	baseLen := len(p.base.String())
	for _, ref := range refs {
		link, kept, err := p.resolveLink(l, ref, baseLen, res)
		if err != nil {
			return err
		}
		if !kept || seen[link] {
			continue
		}
		if p.linkBytes += len(link); p.linkBytes > MaxPageLinkBytes {
			return fmt.Errorf("%w: links of more than %d bytes", ErrLimit, MaxPageLinkBytes)
		}
		seen[link] = true
		res.Links = append(res.Links, Link{URL: link, Kind: l.spec.Kind, Rule: l.index, Priority: l.priority})
	}
	return nil
}

// resolvePasses is how many times resolving, escaping and canonicalizing
// a link read it and the base, as charged.
const resolvePasses = 4

// resolveLink resolves a reference against the page, filters it by the
// rule's allow and deny and canonicalizes it; a reference not kept is
// counted in res as invalid or filtered. A link longer than a seed may be
// (jobspec.MaxURLBytes) is invalid.
func (p *page) resolveLink(l *linkRule, ref string, baseLen int, res *Result) (link string, kept bool, err error) {
	if len(ref) > jobspec.MaxURLBytes {
		res.Invalid++
		return "", false, nil
	}
	if !p.m.charge(resolvePasses * docCost(len(ref)+baseLen)) {
		return "", false, p.m.err
	}
	abs, err := p.base.Parse(ref)
	if err != nil {
		res.Invalid++
		return "", false, nil
	}
	abs.Fragment, abs.RawFragment = "", ""
	if link = abs.String(); len(link) > jobspec.MaxURLBytes {
		res.Invalid++
		return "", false, nil
	}
	if admitted, err := p.admits(l, link); err != nil || !admitted {
		if err == nil {
			res.Filtered++
		}
		return "", false, err
	}
	if link, err = canon.URL(link); err != nil {
		res.Invalid++
		return "", false, nil
	}
	return link, true, nil
}
