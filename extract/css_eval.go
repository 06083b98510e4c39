package extract

// cssEval evaluates compiled selectors on one page's tree, charging its
// meter. The sets of relative pseudo-class arguments are computed once
// per page.
type cssEval struct {
	t    *tree
	m    *meter
	memo map[*cssSelector][]bool
	rels map[*relPseudo][]bool
}

func newCSSEval(t *tree, m *meter) *cssEval {
	return &cssEval{t: t, m: m, memo: map[*cssSelector][]bool{}, rels: map[*relPseudo][]bool{}}
}

// selectPositions returns the positions in the tree of the elements
// matching sel, in document order; on false the meter stopped the work.
func (e *cssEval) selectPositions(sel *cssSelector) ([]int32, bool) {
	set, ok := e.set(sel)
	if !ok {
		return nil, false
	}
	var out []int32
	for i, in := range set {
		if in {
			out = append(out, int32(i))
		}
	}
	return out, true
}

// set is the membership of every element in sel: the union of its
// complex selectors.
func (e *cssEval) set(sel *cssSelector) ([]bool, bool) {
	if s, ok := e.memo[sel]; ok {
		return s, true
	}
	var union []bool
	for _, c := range sel.alts {
		s, ok := e.complex(c)
		if !ok {
			return nil, false
		}
		if union == nil {
			union = s
			continue
		}
		for i, in := range s {
			union[i] = union[i] || in
		}
	}
	e.memo[sel] = union
	return union, true
}

// complex evaluates one complex selector left to right: each step keeps
// the elements that stand in the combinator's relation to the set so far
// and match the next compound.
func (e *cssEval) complex(c *cssComplex) ([]bool, bool) {
	n := len(e.t.nodes)
	cur := make([]bool, n)
	for i := range cur {
		cur[i] = true
	}
	for step, part := range c.parts {
		if step > 0 {
			cur = e.combine(cur, c.combs[step-1])
		}
		if !e.m.charge(int64(n)) {
			return nil, false
		}
		for i, cand := range cur {
			if !cand {
				continue
			}
			ok, more := e.matches(part, int32(i))
			if !more {
				return nil, false
			}
			cur[i] = ok
		}
	}
	return cur, true
}

// combine returns the elements related to some element of prev by comb,
// each in one pass over the elements in document order.
func (e *cssEval) combine(prev []bool, comb byte) []bool {
	t := e.t
	out := make([]bool, len(prev))
	switch comb {
	case ' ': // a descendant of an element of prev
		cover := int32(0) // one past the last descendant of the prev elements seen so far
		for i := range out {
			out[i] = int32(i) < cover
			if prev[i] && t.end[i] > cover {
				cover = t.end[i]
			}
		}
	case '>':
		for i := range out {
			p := t.parent[i]
			out[i] = p >= 0 && prev[p]
		}
	case '+':
		for i := range out {
			s := t.prevSib[i]
			out[i] = s >= 0 && prev[s]
		}
	case '~': // a later sibling of an element of prev
		seen := make([]bool, len(prev)+1) // by parent+1: a prev child was seen
		for i := range out {
			p := t.parent[i] + 1
			out[i] = seen[p]
			if prev[i] {
				seen[p] = true
			}
		}
	}
	return out
}

// matches reports whether element i matches the compound c; more is
// false when the meter stopped the work.
func (e *cssEval) matches(c *cssCompound, i int32) (ok, more bool) {
	for k := range c.rel {
		set, more := e.relSet(&c.rel[k])
		if !more {
			return false, false
		}
		if !set[i] {
			return false, true
		}
	}
	if c.match == nil {
		return true, true
	}
	if !e.m.charge(e.cost(c.cost, i)) {
		return false, false
	}
	return c.match.Match(e.t.nodes[i]), true
}

// cost is what cascadia may spend matching a compound on element i.
func (e *cssEval) cost(c compoundCost, i int32) int64 {
	t := e.t
	units := int64(1)
	if c.text {
		units += t.text[i] / 8
	}
	if c.siblings {
		units += t.siblings(i)
	}
	if c.kids {
		units += int64(t.kids[i])
	}
	if c.lang {
		units += int64(t.depth[i])
	}
	return units
}

// relSet is the set of elements a relative pseudo-class admits: not in
// its argument's set (:not), with a descendant in it (:has), with a child
// in it (:haschild).
func (e *cssEval) relSet(r *relPseudo) ([]bool, bool) {
	if s, ok := e.rels[r]; ok {
		return s, true
	}
	arg, ok := e.set(r.arg)
	if !ok {
		return nil, false
	}
	out := make([]bool, len(arg))
	t := e.t
	switch r.name {
	case "not":
		for i, in := range arg {
			out[i] = !in
		}
	case "has": // a descendant in arg: count arg members before each index
		before := make([]int32, len(arg)+1)
		for i, in := range arg {
			before[i+1] = before[i]
			if in {
				before[i+1]++
			}
		}
		for i := range out {
			out[i] = before[t.end[i]]-before[i+1] > 0
		}
	case "haschild":
		for i, in := range arg {
			if p := t.parent[i]; in && p >= 0 {
				out[p] = true
			}
		}
	}
	if !e.m.charge(int64(len(arg))) {
		return nil, false
	}
	e.rels[r] = out
	return out, true
}
