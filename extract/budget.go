package extract

import (
	"context"
	"errors"
	"fmt"
)

// ErrLimit is returned when extracting a page would take more work than
// its budget allows: a selector that costs more than linear time on this
// page (text or position pseudo-classes over a deep or wide tree, an
// XPath that walks the tree many times). The page fails with kind
// FailureLimit rather than holding a core.
var ErrLimit = errors.New("extraction work limit reached")

// FailureLimit is the failure kind of a page whose extraction reached its
// work limit.
const FailureLimit = "extract_limit"

// FailureKind is the failure kind of a page whose extraction failed with
// err: FailureLimit for ErrLimit and ErrTooDeep, else "".
func FailureKind(err error) string {
	if errors.Is(err, ErrLimit) || errors.Is(err, ErrTooDeep) {
		return FailureLimit
	}
	return ""
}

// Budget bounds the work of extracting one page, in units of about one
// element visited: Base units, plus PerNode for each element of the page
// (each 16 bytes of a JSON page). Every selector step visits each element
// about twice, so a job's rules stay far below it on any page; what does
// not is a selector whose cost grows faster than the page.
type Budget struct {
	Base    int64
	PerNode int64
}

// DefaultBudget allows 4M units plus 1024 per element: about 0.1 s plus
// 20 µs per element at worst on the machines this was measured on.
var DefaultBudget = Budget{Base: 1 << 22, PerNode: 1024}

// limit is the budget of a page of nodes elements.
func (b Budget) limit(nodes int) int64 {
	if b.Base <= 0 && b.PerNode <= 0 {
		b = DefaultBudget
	}
	return b.Base + b.PerNode*int64(nodes)
}

// checkEvery is how many units of work pass between looks at the context.
const checkEvery = 1 << 14

// meter counts the work of one page's extraction against its limit and
// stops it when the context is done.
type meter struct {
	ctx   context.Context
	limit int64
	used  int64
	check int64 // used at the next look at ctx
	err   error // why the work stopped: ErrLimit or the context's error
}

// newMeter returns a meter that looks at ctx on its first charge, so a
// page whose process is stopping is not started, then every checkEvery
// units.
func newMeter(ctx context.Context, limit int64) *meter {
	return &meter{ctx: ctx, limit: limit}
}

// charge counts n units of work about to be done; false means stop (see
// m.err). Once false, it stays false.
func (m *meter) charge(n int64) bool {
	if m.err != nil {
		return false
	}
	m.used += n
	if m.used > m.limit {
		m.err = fmt.Errorf("%w: more than %d units", ErrLimit, m.limit)
		return false
	}
	if m.used >= m.check {
		m.check = m.used + checkEvery
		if err := m.ctx.Err(); err != nil {
			m.err = err
			return false
		}
	}
	return true
}
