package extract

import (
	"fmt"
	"regexp"
	"regexp/syntax"
)

// pattern is a compiled allow, deny or regex pattern, and what one run of
// it costs for each 16 bytes of the text it reads: Go's regexp is linear
// in the text, times the size of the pattern's program at worst.
type pattern struct {
	re   *regexp.Regexp
	cost int64
}

// compilePattern compiles an allow, deny or regex pattern ("" is none).
func compilePattern(key, expr string) (*pattern, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a valid regular expression: %v", key, expr, err)
	}
	return &pattern{re: re, cost: programCost(expr)}, nil
}

// instsPerUnit is how many instructions of a pattern's program cost one
// unit for each 16 bytes of text: a pattern of a few dozen instructions
// costs a unit.
const instsPerUnit = 32

// programCost is 1 plus a unit for each instsPerUnit instructions of the
// pattern's program.
func programCost(expr string) int64 {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 1
	}
	return 1 + int64(len(prog.Inst)/instsPerUnit)
}

// runCost is the charge for running pt over s.
func (pt *pattern) runCost(s string) int64 { return docCost(len(s)) * pt.cost }

// matches reports whether pt matches s, charging the run to the page.
func (p *page) matches(pt *pattern, s string) (bool, error) {
	if !p.m.charge(pt.runCost(s)) {
		return false, p.m.err
	}
	return pt.re.MatchString(s), nil
}

// submatch is pt's first group in s, or its whole match, charging the run
// to the page.
func (p *page) submatch(pt *pattern, s string) (cut string, ok bool, err error) {
	if !p.m.charge(pt.runCost(s)) {
		return "", false, p.m.err
	}
	m := pt.re.FindStringSubmatch(s)
	switch {
	case m == nil:
		return "", false, nil
	case len(m) > 1:
		return m[1], true, nil
	}
	return m[0], true, nil
}

// admits reports whether a resolved link passes the rule's allow and deny.
func (p *page) admits(l *linkRule, link string) (bool, error) {
	if l.allow != nil {
		if ok, err := p.matches(l.allow, link); !ok || err != nil {
			return false, err
		}
	}
	if l.deny != nil {
		denied, err := p.matches(l.deny, link)
		return !denied, err
	}
	return true, nil
}
