package extract

import (
	"fmt"
	"strings"
	"sync"

	"github.com/antchfx/xpath"
	"golang.org/x/net/html"
)

// xpathRule is a compiled XPath 1.0 expression. An xpath.Expr keeps
// state while it evaluates, so each evaluation takes one of its own from
// a pool.
type xpathRule struct {
	pool sync.Pool
}

// compileXPath compiles an XPath 1.0 expression.
func compileXPath(expr string) (*xpathRule, error) {
	e, err := xpath.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid XPath expression: %v", expr, err)
	}
	r := &xpathRule{}
	r.pool.New = func() any { return xpath.MustCompile(expr) }
	r.pool.Put(e)
	return r, nil
}

// xpathItem is one result of an XPath expression: a node (an attribute
// when attr >= 0) or, for an expression of another type (string(),
// count()), its value.
type xpathItem struct {
	node   *html.Node
	attr   int
	scalar string
	// el is the node's position in the tree plus one, when the CSS
	// evaluator that selected it knows it (0: not known).
	el int32
}

// evalXPath evaluates expr on the page, every step of the evaluation
// charged to the meter through the navigator; on false the meter stopped
// it.
func evalXPath(r *xpathRule, t *tree, m *meter) ([]xpathItem, bool) {
	expr := r.pool.Get().(*xpath.Expr)
	defer r.pool.Put(expr)
	nav := &navigator{root: t.root, curr: t.root, attr: -1, t: t, m: m}
	var out []xpathItem
	switch v := expr.Evaluate(nav).(type) {
	case *xpath.NodeIterator:
		for v.MoveNext() && m.err == nil {
			cur := v.Current().(*navigator)
			out = append(out, xpathItem{node: cur.curr, attr: cur.attr})
		}
	case string:
		out = append(out, xpathItem{scalar: v})
	case float64:
		out = append(out, xpathItem{scalar: formatFloat(v)})
	case bool:
		out = append(out, xpathItem{scalar: fmt.Sprint(v)})
	}
	return out, m.err == nil
}

// navigator is an xpath.NodeNavigator over the parsed page, as
// github.com/antchfx/htmlquery's, that charges every move and every value
// it reads to the page's meter and, once that stops, moves no more, so
// the evaluation ends.
type navigator struct {
	root, curr *html.Node
	attr       int
	t          *tree
	m          *meter
}

// step charges one move.
func (n *navigator) step() bool { return n.m.charge(1) }

// NodeType returns the XPath type of the current node.
func (n *navigator) NodeType() xpath.NodeType {
	switch n.curr.Type {
	case html.CommentNode:
		return xpath.CommentNode
	case html.TextNode:
		return xpath.TextNode
	case html.ElementNode:
		if n.attr != -1 {
			return xpath.AttributeNode
		}
		return xpath.ElementNode
	}
	return xpath.RootNode // the document, and the doctype as htmlquery reads it
}

// LocalName is the element's or attribute's name.
func (n *navigator) LocalName() string {
	if n.attr != -1 {
		return n.curr.Attr[n.attr].Key
	}
	return n.curr.Data
}

// Prefix is always empty: HTML has no namespace prefixes here.
func (*navigator) Prefix() string { return "" }

// Value is the current node's string value; an element's is its text,
// charged by its size.
func (n *navigator) Value() string {
	switch n.curr.Type {
	case html.CommentNode, html.TextNode:
		return n.curr.Data
	case html.ElementNode:
		if n.attr != -1 {
			return n.curr.Attr[n.attr].Val
		}
		if i, ok := n.t.indexOf(n.curr); ok && !n.m.charge(1+n.t.text[i]/8) {
			return ""
		}
		return innerText(n.curr)
	}
	return ""
}

// Copy returns a navigator at the same place.
func (n *navigator) Copy() xpath.NodeNavigator {
	c := *n
	return &c
}

// MoveToRoot moves to the document.
func (n *navigator) MoveToRoot() { n.curr = n.root }

// MoveToParent moves to the parent node, or from an attribute to its
// element.
func (n *navigator) MoveToParent() bool {
	if !n.step() {
		return false
	}
	if n.attr != -1 {
		n.attr = -1
		return true
	}
	if n.curr.Parent == nil {
		return false
	}
	n.curr = n.curr.Parent
	return true
}

// MoveToNextAttribute moves to the element's next attribute.
func (n *navigator) MoveToNextAttribute() bool {
	if !n.step() || n.attr >= len(n.curr.Attr)-1 {
		return false
	}
	n.attr++
	return true
}

// MoveToChild moves to the first child node.
func (n *navigator) MoveToChild() bool {
	if !n.step() || n.attr != -1 || n.curr.FirstChild == nil {
		return false
	}
	n.curr = n.curr.FirstChild
	return true
}

// MoveToFirst moves to the first sibling node.
func (n *navigator) MoveToFirst() bool {
	if n.attr != -1 || n.curr.PrevSibling == nil {
		return false
	}
	for n.curr.PrevSibling != nil {
		if !n.step() {
			return false
		}
		n.curr = n.curr.PrevSibling
	}
	return true
}

// MoveToNext moves to the next sibling node.
func (n *navigator) MoveToNext() bool {
	if !n.step() || n.attr != -1 || n.curr.NextSibling == nil {
		return false
	}
	n.curr = n.curr.NextSibling
	return true
}

// MoveToPrevious moves to the previous sibling node.
func (n *navigator) MoveToPrevious() bool {
	if !n.step() || n.attr != -1 || n.curr.PrevSibling == nil {
		return false
	}
	n.curr = n.curr.PrevSibling
	return true
}

// MoveTo moves to where other is.
func (n *navigator) MoveTo(other xpath.NodeNavigator) bool {
	o, ok := other.(*navigator)
	if !ok || o.root != n.root || !n.step() {
		return false
	}
	n.curr, n.attr = o.curr, o.attr
	return true
}

// String is the current node's value.
func (n *navigator) String() string { return n.Value() }

// innerText is the text of n's subtree, as XPath's string value of an
// element: every text node, nothing added between them.
func innerText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = next(n, c) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}
