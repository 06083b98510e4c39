package extract

import (
	"sync"

	"golang.org/x/net/html"
)

// tree indexes a parsed page's elements in document order, so that a
// selector step is one pass over an array: element i's descendants are
// the elements i+1 .. end[i]-1.
type tree struct {
	root  *html.Node
	nodes []*html.Node // the elements, in document order
	end   []int32      // one past the last descendant of each element
	// parent and prevSib are the element's parent element and previous
	// element sibling, -1 for none.
	parent, prevSib []int32
	depth           []int32 // ancestors above the element
	kids            []int32 // child nodes of the element (all types)
	topKids         int32   // child nodes of the document
	text            []int64 // bytes of text in the element's subtree
	// index is an element's position in nodes, made when first asked
	// (indexOf): CSS selectors work on positions and never need it.
	indexOnce sync.Once
	index     map[*html.Node]int32
}

// newTree indexes the elements under root, walking the tree without
// recursion (a hostile page may nest deeply).
func newTree(root *html.Node) *tree {
	n := countElements(root)
	t := newTreeSized(root, n)
	b := treeBuild{stack: make([]int32, 0, 16), lastKid: make([]int32, n), topLast: -1}
	for c := root.FirstChild; c != nil; c = next(root, c) {
		if c.Parent == root {
			t.topKids++
		}
		switch c.Type {
		case html.ElementNode:
			t.add(c, &b)
		case html.TextNode:
			if p := t.closeTo(c.Parent, &b); p >= 0 {
				t.text[p] += int64(len(c.Data))
			}
		}
	}
	for _, open := range b.stack {
		t.end[open] = int32(len(t.nodes))
	}
	for i := len(t.nodes) - 1; i >= 0; i-- {
		if p := t.parent[i]; p >= 0 {
			t.text[p] += t.text[i]
		}
	}
	return t
}

// treeBuild is newTree's state: the open elements, innermost last, and
// each element's last element child so far (topLast the document's).
type treeBuild struct {
	stack   []int32
	lastKid []int32
	topLast int32
}

// countElements counts the elements under root: the tree's arrays are
// made that size once, not grown element by element (a page's tree was a
// tenth of a slave's allocations).
func countElements(root *html.Node) int {
	n := 0
	for c := root.FirstChild; c != nil; c = next(root, c) {
		if c.Type == html.ElementNode {
			n++
		}
	}
	return n
}

// newTreeSized is an empty tree with room for n elements.
func newTreeSized(root *html.Node, n int) *tree {
	ints := make([]int32, 5*n) // end, parent, prevSib, depth, kids
	return &tree{root: root, nodes: make([]*html.Node, 0, n),
		end: ints[0:0:n], parent: ints[n : n : 2*n], prevSib: ints[2*n : 2*n : 3*n], depth: ints[3*n : 3*n : 4*n],
		kids: ints[4*n : 4*n : 5*n], text: make([]int64, 0, n)}
}

// closeTo closes the open elements that parent is not inside, and returns
// parent's position: the innermost open element, or -1 when parent is not
// an element (the document).
func (t *tree) closeTo(parent *html.Node, b *treeBuild) int32 {
	i := int32(len(t.nodes))
	for len(b.stack) > 0 && t.nodes[b.stack[len(b.stack)-1]] != parent {
		t.end[b.stack[len(b.stack)-1]] = i
		b.stack = b.stack[:len(b.stack)-1]
	}
	if len(b.stack) == 0 {
		return -1
	}
	return b.stack[len(b.stack)-1]
}

// add appends element n, closing the elements it is not inside.
func (t *tree) add(n *html.Node, b *treeBuild) {
	i := int32(len(t.nodes))
	parent := t.closeTo(n.Parent, b)
	prev := &b.topLast // the parent's last element child: n's previous element sibling
	if parent >= 0 {
		prev = &b.lastKid[parent]
	}
	kids := int32(0)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		kids++
	}
	t.nodes = append(t.nodes, n)
	t.end = append(t.end, 0)
	t.parent = append(t.parent, parent)
	t.prevSib = append(t.prevSib, *prev)
	t.depth = append(t.depth, int32(len(b.stack)))
	t.kids = append(t.kids, kids)
	t.text = append(t.text, 0)
	*prev, b.lastKid[i] = i, -1
	b.stack = append(b.stack, i)
}

// indexOf is element n's position in nodes; false for a node that is not
// one of the tree's elements.
func (t *tree) indexOf(n *html.Node) (int32, bool) {
	t.indexOnce.Do(func() {
		t.index = make(map[*html.Node]int32, len(t.nodes))
		for i, e := range t.nodes {
			t.index[e] = int32(i)
		}
	})
	i, ok := t.index[n]
	return i, ok
}

// next is the node after n in document order below root, or nil.
func next(root, n *html.Node) *html.Node {
	if n.FirstChild != nil {
		return n.FirstChild
	}
	for ; n != root; n = n.Parent {
		if n.NextSibling != nil {
			return n.NextSibling
		}
	}
	return nil
}

// siblings is how many child nodes element i's parent has: what a
// positional pseudo-class (:nth-child) walks.
func (t *tree) siblings(i int32) int64 {
	if p := t.parent[i]; p >= 0 {
		return int64(t.kids[p])
	}
	return int64(t.topKids)
}
