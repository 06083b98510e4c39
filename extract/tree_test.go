package extract

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// refTree is the tree as it was first built, with an index map filled as
// the walk goes: the previous element sibling looked up by walking back
// through the siblings, a text node's element by its parent's entry.
func refTree(root *html.Node) *tree {
	t := &tree{root: root, index: map[*html.Node]int32{}}
	var stack []int32
	for n := root.FirstChild; n != nil; n = next(root, n) {
		if n.Parent == root {
			t.topKids++
		}
		switch n.Type {
		case html.ElementNode:
			refAdd(t, n, &stack)
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

func refAdd(t *tree, n *html.Node, stack *[]int32) {
	i := int32(len(t.nodes))
	for len(*stack) > 0 && t.nodes[(*stack)[len(*stack)-1]] != n.Parent {
		t.end[(*stack)[len(*stack)-1]] = i
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
	t.end, t.parent, t.prevSib = append(t.end, 0), append(t.parent, parent), append(t.prevSib, prev)
	t.depth, t.kids, t.text = append(t.depth, int32(len(*stack))), append(t.kids, kids), append(t.text, 0)
	*stack = append(*stack, i)
}

// checkTree builds the tree of page both ways and compares every array,
// and indexOf with the reference's index.
func checkTree(t *testing.T, page string) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	got, want := newTree(root), refTree(root)
	same := slices.Equal(got.nodes, want.nodes) && slices.Equal(got.end, want.end) &&
		slices.Equal(got.parent, want.parent) && slices.Equal(got.prevSib, want.prevSib) &&
		slices.Equal(got.depth, want.depth) && slices.Equal(got.kids, want.kids) &&
		slices.Equal(got.text, want.text) && got.topKids == want.topKids
	if !same {
		t.Fatalf("tree of %.200q differs from the reference:\n got %+v\nwant %+v", page, got, want)
	}
	for n, i := range want.index {
		if j, ok := got.indexOf(n); !ok || j != i {
			t.Fatalf("indexOf(<%s>) = %d, %v; want %d", n.Data, j, ok, i)
		}
	}
	if _, ok := got.indexOf(root); ok {
		t.Fatal("indexOf(the document) found it among the elements")
	}
}

// TestNewTree_SameAsReference holds the tree built without an index map
// to the one built with it, on the test pages and on pages whose tags the
// parser reshapes (misnested, unclosed, tables, text at the top).
func TestNewTree_SameAsReference(t *testing.T) {
	pages := []string{"", "text only", "<p>a<b>b<i>c</p>d</i>e", "<table><tr><td>a<div>b</table>c",
		"<ul><li>1<li>2<ul><li>3</ul><li>4</ul><p>x", "<a><b></a></b><a>x", "<html><body></body></html>tail",
		"<div><p>a</p> b <span>c</span><p>d</div>", "<select><option>a<option>b</select><template><p>t</template>"}
	for _, name := range []string{"detail.html", "list.html", "product.html"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, string(raw))
	}
	for _, page := range pages {
		checkTree(t, page)
	}
}

// FuzzNewTree holds the tree to the reference on fuzzed pages.
func FuzzNewTree(f *testing.F) {
	for _, seed := range []string{"<p>a<b>b<i>c</p>d</i>e", "<table><tr><td>a<div>b</table>c", "<ul><li>1<li>2</ul>"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, page string) {
		if len(page) > 1<<16 {
			return
		}
		checkTree(t, page)
	})
}
