package extract

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode"
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
// content below them. The text is folded as it is read (spaceFolder), not
// joined and then collapsed.
func textOf(nodes []*html.Node, hidden bool) string {
	var f spaceFolder
	for _, n := range nodes {
		f.node(n, hidden)
	}
	return f.String()
}

// spaceFolder builds CollapseSpace of all the text it is given, joined,
// without joining it first: every run of white space becomes one space,
// none at either end.
type spaceFolder struct {
	b       strings.Builder
	pending bool // white space since the last word written
	// carry is the start of a character cut at the end of the last
	// write (bytes of broken UTF-8, or of two text nodes), read with the
	// next: joined they may be white space (U+00A0 is C2 A0).
	carry string
}

// String is the folded text.
func (f *spaceFolder) String() string {
	f.flushCarry()
	return f.b.String()
}

// flushCarry writes a carried cut character as what it is alone: not
// white space.
func (f *spaceFolder) flushCarry() {
	if f.carry == "" {
		return
	}
	if f.pending && f.b.Len() > 0 {
		f.b.WriteByte(' ')
	}
	f.b.WriteString(f.carry)
	f.carry, f.pending = "", false
}

// node writes the text below n (see textOf).
func (f *spaceFolder) node(n *html.Node, hidden bool) {
	switch n.Type {
	case html.TextNode:
		f.write(n.Data)
		return
	case html.ElementNode:
		if hidden {
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				return
			}
		}
		if blockElements[n.DataAtom] {
			f.pending = true
			defer f.space()
		}
	case html.CommentNode, html.DoctypeNode:
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		f.node(c, hidden)
	}
}

// space ends the current word, as white space does.
func (f *spaceFolder) space() {
	f.flushCarry()
	f.pending = true
}

// write folds s in: its words are written, a space before each that
// follows white space (and is not the first).
func (f *spaceFolder) write(s string) {
	if f.carry != "" {
		s, f.carry = f.carry+s, ""
	}
	if cut := cutRuneStart(s); cut < len(s) {
		s, f.carry = s[:cut], s[cut:]
	}
	word := -1 // where the word being read began in s
	for i := 0; i < len(s); {
		c, size := rune(s[i]), 1
		space := c < utf8.RuneSelf && asciiSpace[c]
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(c)
		}
		switch {
		case space && word >= 0:
			f.b.WriteString(s[word:i])
			word, f.pending = -1, true
		case space:
			f.pending = true
		case word < 0:
			if f.pending && f.b.Len() > 0 {
				f.b.WriteByte(' ')
			}
			word, f.pending = i, false
		}
		i += size
	}
	if word >= 0 {
		f.b.WriteString(s[word:])
	}
}

// cutRuneStart is where a character cut short begins at the end of s
// (the first byte of a sequence that needs more than s holds), len(s) if
// none.
func cutRuneStart(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(s[i]) {
			if s[i] >= utf8.RuneSelf && !utf8.FullRuneInString(s[i:]) {
				return i
			}
			break
		}
	}
	return len(s)
}

// asciiSpace is the ASCII white space strings.Fields splits at.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

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
