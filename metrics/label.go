package metrics

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Other is the label value that every value past a label's bound is folded
// into: the hosts after the first Options.Hosts, the jobs after the first
// Options.Jobs, and so on.
const Other = "other"

// maxLabelLen is the longest value a bounded label keeps; a longer one is
// folded into Other (a DNS name has at most 253 characters).
const maxLabelLen = 253

// labelSet admits the first max distinct values of one label, for the life
// of the registry, and folds every later value into Other. First come,
// first kept: a value never changes series once admitted, so counters stay
// monotone (a top-N that moved a host between its own series and Other
// would make both jump). It is safe for concurrent use; once full, a
// lookup takes no lock.
type labelSet struct {
	max  int
	seen sync.Map // admitted value → struct{}
	mu   sync.Mutex
	n    int
	full atomic.Bool
}

func newLabelSet(max int) *labelSet { return &labelSet{max: max} }

// label returns v if it has, or now gets, a label of its own, else Other.
// The empty string, invalid UTF-8 and overlong values are Other.
func (s *labelSet) label(v string) string {
	if _, ok := s.seen.Load(v); ok {
		return v
	}
	if s.full.Load() || v == "" || v == Other || len(v) > maxLabelLen || !utf8.ValidString(v) {
		return Other
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen.Load(v); ok {
		return v
	}
	if s.n >= s.max {
		s.full.Store(true)
		return Other
	}
	s.seen.Store(v, struct{}{})
	s.n++
	return v
}

// bounded caches, per admitted label value, what newT builds for it (a
// counter, or a struct of series), and hands every folded value the one
// built for Other. The cache holds admitted values only, so it is bounded
// by the label set, however many distinct values callers pass.
type bounded[T any] struct {
	set   *labelSet
	newT  func(label string) T
	mu    sync.RWMutex
	cache map[string]T
	other lazy[T]
}

func newBounded[T any](set *labelSet, newT func(label string) T) *bounded[T] {
	return &bounded[T]{set: set, newT: newT, cache: make(map[string]T)}
}

// get returns the T for value v.
func (b *bounded[T]) get(v string) T {
	b.mu.RLock()
	t, ok := b.cache[v]
	b.mu.RUnlock()
	if ok {
		return t
	}
	l := b.set.label(v)
	if l == Other {
		return b.other.get(func() T { return b.newT(Other) })
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.cache[l]; ok {
		return t
	}
	t = b.newT(l)
	b.cache[l] = t
	return t
}

// lazy is a value built on first use; two first uses at once may both
// build it, so newT must return the same series each time (WithLabelValues
// does).
type lazy[T any] struct{ p atomic.Pointer[T] }

func (l *lazy[T]) get(newT func() T) T {
	if p := l.p.Load(); p != nil {
		return *p
	}
	v := newT()
	l.p.Store(&v)
	return v
}

// hostLabel is the form of a host the host label keys on: lower case.
func hostLabel(host string) string { return strings.ToLower(host) }
