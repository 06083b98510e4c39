package extract

import (
	"golang.org/x/net/html"
)

// tree indexes a parsed page's elements in document order, so that a
// selector step is one pass over an array: element i's descendants are
// the elements i+1 .. end[i]-1.
type tree struct {
	root  *html.Node
	nodes []*html.Node         // the elements, in document order
	index map[*html.Node]int32 // an element's position in nodes
	end   []int32              // one past the last descendant of each element
	// parent and prevSib are the element's parent element and previous
	// element sibling, -1 for none.
	parent, prevSib []int32
	depth           []int32 // ancestors above the element
	kids            []int32 // child nodes of the element (all types)
	topKids         int32   // child nodes of the document
	text            []int64 // bytes of text in the element's subtree
}

// newTree indexes the elements under root, walking the tree without
// recursion (a hostile page may nest deeply).
func newTree(root *html.Node) *tree {
	t := &tree{root: root, index: map[*html.Node]int32{}}
	var stack []int32 // open elements, innermost last
	for n := root.FirstChild; n != nil; n = next(root, n) {
		if n.Parent == root {
			t.topKids++
		}
		switch n.Type {
		case html.ElementNode:
			t.add(n, &stack)
		case html.TextNode:
			if p, ok := t.index[n.Parent]; ok {
				t.text[p] += int64(len(n.Data))
			}
		}
	}
	for _, open := range stack {
		t.end[open] = int32(len(t.nodes))
	}
	for i := len(t.nodes) - 1; i >= 0; i-- {
		if p := t.parent[i]; p >= 0 {
			t.text[p] += t.text[i]
		}
	}
	return t
}

// add appends element n, closing the elements on stack it is not inside.
func (t *tree) add(n *html.Node, stack *[]int32) {
	i := int32(len(t.nodes))
	for len(*stack) > 0 && t.nodes[(*stack)[len(*stack)-1]] != n.Parent {
		top := (*stack)[len(*stack)-1]
		t.end[top] = i
		*stack = (*stack)[:len(*stack)-1]
	}
	parent := int32(-1)
	if len(*stack) > 0 {
		parent = (*stack)[len(*stack)-1]
	}
	prev := int32(-1)
	for s := n.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode {
			prev = t.index[s]
			break
		}
	}
	kids := int32(0)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		kids++
	}
	t.nodes = append(t.nodes, n)
	t.index[n] = i
	t.end = append(t.end, 0)
	t.parent = append(t.parent, parent)
	t.prevSib = append(t.prevSib, prev)
	t.depth = append(t.depth, int32(len(*stack)))
	t.kids = append(t.kids, kids)
	t.text = append(t.text, 0)
	*stack = append(*stack, i)
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
