package extract

import (
	"fmt"
	"strings"

	"github.com/andybalholm/cascadia"
)

// A CSS selector is evaluated here a set at a time: the elements matching
// its first compound selector, then the descendants (children, siblings)
// of that set that match the next, each step one pass over the page's
// elements. cascadia, which goquery uses, matches element by element and
// backtracks over ancestors at every descendant combinator, so
// "p div div div div div a" costs n^6 on n nested elements (53 s at
// n = 100); here it costs 7 passes. cascadia still parses every selector
// (so exactly what it accepts is accepted) and matches each compound
// selector on one element, which costs a bounded, charged amount.
// :not(), :has() and :haschild(), whose arguments may hold combinators
// again, are evaluated as sets too.

// cssSelector is a compiled selector group: a, b, c.
type cssSelector struct {
	alts []*cssComplex
}

// cssComplex is one complex selector: compounds joined by combinators
// (' ', '>', '+', '~'); combs[i] joins parts[i] and parts[i+1].
type cssComplex struct {
	parts []*cssCompound
	combs []byte
}

// cssCompound is one compound selector: what cascadia matches on an
// element (nil: any element), and the relative pseudo-classes taken out of
// it, evaluated as sets.
type cssCompound struct {
	match cascadia.Selector
	cost  compoundCost
	rel   []relPseudo
}

// relPseudo is :not(arg), :has(arg) or :haschild(arg).
type relPseudo struct {
	name string
	arg  *cssSelector
}

// compoundCost says which parts of a compound cost more than one step on
// an element, so that each match is charged what it may cost.
type compoundCost struct {
	text     bool // :contains, :matches: the element's text
	siblings bool // :nth-*, :first-*, :last-*, :only-*: its siblings
	kids     bool // :empty: its children
	lang     bool // :lang: its ancestors
}

// compileCSS compiles a selector group. It accepts exactly what cascadia
// accepts.
func compileCSS(sel string) (*cssSelector, error) {
	if _, err := cascadia.Compile(sel); err != nil {
		return nil, fmt.Errorf("%q is not a valid CSS selector: %v", sel, err)
	}
	p := &cssScanner{s: sel}
	g, err := p.group(false)
	if err == nil && !p.eof() {
		err = fmt.Errorf("unexpected %q at offset %d", p.s[p.i], p.i)
	}
	if err != nil {
		return nil, fmt.Errorf("css selector %q: %w", sel, err)
	}
	return g, nil
}

// cssScanner splits a selector that cascadia accepted into its group,
// complex and compound selectors, following cascadia's own grammar for
// what may hide a comma, a space or a parenthesis: escapes, strings,
// attribute selectors and the regular expressions of [attr#=re] and
// :matches(re).
type cssScanner struct {
	s string
	i int
}

func (p *cssScanner) eof() bool  { return p.i >= len(p.s) }
func (p *cssScanner) peek() byte { return p.s[p.i] }

// group reads complex selectors separated by commas, up to the end or,
// nested, up to a closing parenthesis (not consumed).
func (p *cssScanner) group(nested bool) (*cssSelector, error) {
	g := &cssSelector{}
	for {
		c, err := p.complex()
		if err != nil {
			return nil, err
		}
		g.alts = append(g.alts, c)
		p.skipSpace()
		switch {
		case p.eof() || (nested && p.peek() == ')'):
			return g, nil
		case p.peek() == ',':
			p.i++
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d", p.peek(), p.i)
		}
	}
}

// complex reads compound selectors joined by combinators.
func (p *cssScanner) complex() (*cssComplex, error) {
	p.skipSpace()
	c := &cssComplex{}
	for {
		part, err := p.compound()
		if err != nil {
			return nil, err
		}
		c.parts = append(c.parts, part)
		space := p.skipSpace()
		if p.eof() || p.peek() == ',' || p.peek() == ')' {
			return c, nil
		}
		switch comb := p.peek(); comb {
		case '>', '+', '~':
			p.i++
			p.skipSpace()
			c.combs = append(c.combs, comb)
		default:
			if !space {
				return nil, fmt.Errorf("unexpected %q at offset %d", comb, p.i)
			}
			c.combs = append(c.combs, ' ')
		}
	}
}

// compound reads one compound selector, taking its relative
// pseudo-classes out, and compiles the rest with cascadia.
func (p *cssScanner) compound() (*cssCompound, error) {
	start, seg := p.i, p.i
	var rest strings.Builder
	c := &cssCompound{}
	for !p.eof() {
		switch ch := p.peek(); {
		case ch == '\\':
			p.escape()
		case ch == '[':
			if err := p.attribute(); err != nil {
				return nil, err
			}
		case ch == ':':
			at := p.i
			rel, err := p.pseudo(&c.cost)
			if err != nil {
				return nil, err
			}
			if rel != nil {
				rest.WriteString(p.s[seg:at])
				seg = p.i
				c.rel = append(c.rel, *rel)
			}
		case strings.IndexByte(" \t\r\n\f>+~,)", ch) >= 0 || strings.HasPrefix(p.s[p.i:], "/*"):
			return c.finish(p, start, seg, &rest)
		default:
			p.i++
		}
	}
	return c.finish(p, start, seg, &rest)
}

// finish compiles what is left of the compound once its relative
// pseudo-classes are out.
func (c *cssCompound) finish(p *cssScanner, start, seg int, rest *strings.Builder) (*cssCompound, error) {
	if p.i == start {
		return nil, fmt.Errorf("expected a selector at offset %d", p.i)
	}
	rest.WriteString(p.s[seg:p.i])
	if text := rest.String(); text != "" && text != "*" {
		m, err := cascadia.Compile(text)
		if err != nil {
			return nil, fmt.Errorf("compound %q: %w", text, err)
		}
		c.match = m
	}
	return c, nil
}

// pseudo reads a pseudo-class (or pseudo-element) at ':'; for :not, :has
// and :haschild it returns the argument, parsed as a group.
func (p *cssScanner) pseudo(cost *compoundCost) (*relPseudo, error) {
	p.i++
	if !p.eof() && p.peek() == ':' {
		p.i++
	}
	start := p.i
	for !p.eof() && (nameByte(p.peek()) || p.peek() == '\\') {
		if p.peek() == '\\' {
			p.escape()
		} else {
			p.i++
		}
	}
	name := strings.ToLower(p.s[start:p.i])
	cost.note(name)
	if p.eof() || p.peek() != '(' {
		return nil, nil
	}
	p.i++
	switch name {
	case "not", "has", "haschild":
		arg, err := p.group(true)
		if err != nil {
			return nil, err
		}
		if p.eof() {
			return nil, fmt.Errorf(":%s( is not closed", name)
		}
		p.i++
		return &relPseudo{name: name, arg: arg}, nil
	case "matches", "matchesown":
		p.regex()
	default:
		p.skipTo(')')
	}
	if !p.eof() {
		p.i++ // the closing parenthesis
	}
	return nil, nil
}

// note records what matching the pseudo-class name costs.
func (c *compoundCost) note(name string) {
	switch {
	case strings.HasPrefix(name, "contains") || strings.HasPrefix(name, "matches"):
		c.text = true
	case strings.HasPrefix(name, "nth-") || strings.HasPrefix(name, "first-") ||
		strings.HasPrefix(name, "last-") || strings.HasPrefix(name, "only-"):
		c.siblings = true
	case name == "empty":
		c.kids = true
	case name == "lang":
		c.lang = true
	}
}

// attribute skips an attribute selector, [ ... ], with its string or
// regular expression value.
func (p *cssScanner) attribute() error {
	p.i++
	for !p.eof() {
		switch ch := p.peek(); {
		case ch == ']':
			p.i++
			return nil
		case ch == '\\':
			p.escape()
		case ch == '"' || ch == '\'':
			p.str()
		case strings.HasPrefix(p.s[p.i:], "#="):
			p.i += 2
			p.skipSpace()
			p.regex()
		default:
			p.i++
		}
	}
	return fmt.Errorf("attribute selector not closed")
}

// regex skips a regular expression as cascadia reads one: up to the first
// ')' or ']' that closes nothing opened inside it.
func (p *cssScanner) regex() {
	open := 0
	for ; !p.eof(); p.i++ {
		switch p.peek() {
		case '(', '[':
			open++
		case ')', ']':
			if open--; open < 0 {
				return
			}
		}
	}
}

// skipTo skips to the byte c (not consumed), over strings and escapes.
func (p *cssScanner) skipTo(c byte) {
	for !p.eof() && p.peek() != c {
		switch p.peek() {
		case '\\':
			p.escape()
		case '"', '\'':
			p.str()
		default:
			p.i++
		}
	}
}

// str skips a quoted string, escapes included.
func (p *cssScanner) str() {
	quote := p.peek()
	for p.i++; !p.eof(); {
		switch p.peek() {
		case '\\':
			p.escape()
		case quote:
			p.i++
			return
		default:
			p.i++
		}
	}
}

// escape skips a backslash escape: up to six hex digits and one white
// space after them, or one other character.
func (p *cssScanner) escape() {
	p.i++
	if p.eof() {
		return
	}
	if !hexByte(p.peek()) {
		p.i++
		return
	}
	for n := 0; n < 6 && !p.eof() && hexByte(p.peek()); n++ {
		p.i++
	}
	if strings.HasPrefix(p.s[p.i:], "\r\n") {
		p.i += 2
	} else if !p.eof() && strings.IndexByte(" \t\n\f\r", p.peek()) >= 0 {
		p.i++
	}
}

// skipSpace skips white space and comments, reporting whether there was
// any.
func (p *cssScanner) skipSpace() bool {
	start := p.i
	for !p.eof() {
		switch {
		case strings.IndexByte(" \t\r\n\f", p.peek()) >= 0:
			p.i++
		case strings.HasPrefix(p.s[p.i:], "/*"):
			end := strings.Index(p.s[p.i+2:], "*/")
			if end < 0 {
				return p.i > start
			}
			p.i += end + 4
		default:
			return p.i > start
		}
	}
	return p.i > start
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c > 127
}

func hexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
