package jobspec

import (
	"fmt"
	"time"
)

// Budget bounds what one round of a job may cost; a zero field is no
// bound. Pages are counted as they are admitted (a list page queued on
// the frontier, an item link routed to a slave), cluster-wide, so a
// round never fetches more than MaxPages pages however many processes
// crawl it. MaxBytes and MaxDuration are checked by the job's master as
// the round goes: reaching one ends the round, what is still queued
// counted as skipped for that budget.
type Budget struct {
	// MaxPages bounds the pages (list and item pages) a round fetches.
	MaxPages int64 `yaml:"max_pages" json:"max_pages,omitempty"`
	// MaxPagesPerHost bounds the pages a round fetches from one host; a
	// host that reaches it is closed for the job until the next round.
	MaxPagesPerHost int64 `yaml:"max_pages_per_host" json:"max_pages_per_host,omitempty"`
	// MaxBytes bounds the bytes of page bodies a round fetches.
	MaxBytes int64 `yaml:"max_bytes" json:"max_bytes,omitempty"`
	// MaxDuration bounds how long a round runs, from its start.
	MaxDuration Duration `yaml:"max_duration" json:"max_duration,omitempty"`
}

// The budgets' names, as a finished job's status gives the one it
// reached (cluster.StateBudgetReached) and as its skipped counters are
// named (skipped_<name>).
const (
	BudgetMaxPages        = "max_pages"
	BudgetMaxPagesPerHost = "max_pages_per_host"
	BudgetMaxBytes        = "max_bytes"
	BudgetMaxDuration     = "max_duration"
)

// MinBudgetDuration is the shortest max_duration a job may ask for.
const MinBudgetDuration = Duration(time.Second)

// Bounded reports whether any budget is set.
func (b Budget) Bounded() bool {
	return b.MaxPages > 0 || b.MaxPagesPerHost > 0 || b.MaxBytes > 0 || b.MaxDuration > 0
}

func (b Budget) validate() error {
	switch {
	case b.MaxPages < 0:
		return fmt.Errorf("budget.max_pages: %d is negative", b.MaxPages)
	case b.MaxPagesPerHost < 0:
		return fmt.Errorf("budget.max_pages_per_host: %d is negative", b.MaxPagesPerHost)
	case b.MaxPages > 0 && b.MaxPagesPerHost > b.MaxPages:
		return fmt.Errorf("budget.max_pages_per_host: %d is more than max_pages (%d)", b.MaxPagesPerHost, b.MaxPages)
	case b.MaxBytes < 0:
		return fmt.Errorf("budget.max_bytes: %d is negative", b.MaxBytes)
	case b.MaxDuration < 0:
		return fmt.Errorf("budget.max_duration: %s is negative", b.MaxDuration)
	case b.MaxDuration > 0 && b.MaxDuration < MinBudgetDuration:
		return fmt.Errorf("budget.max_duration: %s is shorter than %s", b.MaxDuration, MinBudgetDuration)
	}
	return nil
}
