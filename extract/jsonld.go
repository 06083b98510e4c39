package extract

import (
	"errors"
	"strings"

	"github.com/tidwall/gjson"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// jsonLD returns the page's JSON-LD objects, in document order, read once
// per page: each <script type="application/ld+json"> block that is valid
// JSON nested at most MaxJSONDepth deep, each element of a block that is
// a list (of a list within it, ...), and each element of an object's
// @graph after the object. A block is read in one pass whatever its
// nesting (a block of N "[" then N "]" was read N times over), and every
// pass is charged to the page's meter.
func (p *page) jsonLD() ([]string, error) {
	if p.read {
		return p.ld, p.m.err
	}
	p.read = true
	for _, n := range p.t.nodes {
		if n.DataAtom != atom.Script || !isJSONLD(n) {
			continue
		}
		block := strings.TrimSpace(scriptText(n))
		// the depth check and gjson's validation: two passes
		if !p.m.charge(2 * docCost(len(block))) {
			return nil, p.m.err
		}
		if block == "" || checkDepth(block) != nil || !gjson.Valid(block) {
			continue
		}
		w := ldWalk{s: block, m: p.m, out: p.ld}
		if _, err := w.value(0, 1); err != nil {
			if errors.Is(err, errStopped) {
				err = p.m.err
			}
			p.ld = nil
			return nil, err
		}
		p.ld = w.out
	}
	return p.ld, nil
}

// scriptText is the text of a script element.
func scriptText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
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

// ldWalk collects the objects of one valid JSON-LD block in one pass:
// lists are walked into, objects are kept whole (as substrings of the
// block) and walked only for their @graph, anything else is skipped.
// Each value costs a unit, each skipped value its length.
type ldWalk struct {
	s   string
	m   *meter
	out []string
}

// value walks the value at i and returns the index just past it.
func (w *ldWalk) value(i, depth int) (int, error) {
	switch {
	case depth > MaxJSONDepth:
		return 0, ErrTooDeep
	case !w.m.charge(1):
		return 0, errStopped
	case w.s[i] == '[':
		return w.list(i, depth)
	case w.s[i] == '{':
		return w.object(i, depth)
	}
	return w.skip(i)
}

// skip charges the value at i and returns the index just past it.
func (w *ldWalk) skip(i int) (int, error) {
	end := valueEnd(w.s, i)
	if !w.m.charge(docCost(end - i)) {
		return 0, errStopped
	}
	return end, nil
}

// list walks the elements of the list opened at i.
func (w *ldWalk) list(i, depth int) (int, error) {
	for i++; ; {
		if i = skipSpace(w.s, i); i >= len(w.s) {
			return i, nil
		}
		switch w.s[i] {
		case ']':
			return i + 1, nil
		case ',':
			i++
			continue
		}
		var err error
		if i, err = w.value(i, depth+1); err != nil {
			return 0, err
		}
	}
}

// object keeps the object opened at i, before the objects of its first
// @graph, and walks that @graph when it is a list.
func (w *ldWalk) object(i, depth int) (int, error) {
	start, slot := i, len(w.out)
	w.out = append(w.out, "")
	graph := false
	for i++; ; {
		if i = skipSpace(w.s, i); i >= len(w.s) {
			w.out[slot] = w.s[start:]
			return i, nil
		}
		switch w.s[i] {
		case '}':
			w.out[slot] = w.s[start : i+1]
			return i + 1, nil
		case ',', ':':
			i++
			continue
		}
		keyEnd := valueEnd(w.s, i)
		isGraph := !graph && graphKey(w.s[i:keyEnd])
		if i = skipSpace(w.s, keyEnd); i < len(w.s) && w.s[i] == ':' {
			i = skipSpace(w.s, i+1)
		}
		if i >= len(w.s) {
			continue
		}
		var err error
		if isGraph {
			graph = true
		}
		if isGraph && w.s[i] == '[' {
			i, err = w.list(i, depth+1)
		} else {
			i, err = w.skip(i)
		}
		if err != nil {
			return 0, err
		}
	}
}

// graphKey reports whether a quoted key is "@graph".
func graphKey(key string) bool {
	if key == `"@graph"` {
		return true
	}
	return strings.Contains(key, `\`) && gjson.Parse(key).Str == "@graph"
}

// jsonLDValues returns the values at path in the first JSON-LD object of
// the page where it resolves, each object's read charged to the page.
func (p *page) jsonLDValues(path string) ([]value, error) {
	objects, err := p.jsonLD()
	if err != nil {
		return nil, err
	}
	for _, o := range objects {
		vals, err := p.jsonPathValues(o, path)
		if err != nil || len(vals) > 0 {
			return vals, err
		}
	}
	return nil, nil
}
