package dedup

import (
	"context"
	"fmt"
	"strings"

	"github.com/crawler-dev/crawler/canon"
)

// Candidate is one link offered to Admit.
type Candidate struct {
	// FP is the link's fingerprint.
	FP canon.Fingerprint
	// Queue is the list to RPUSH Payload onto if the link is new; "" for
	// none.
	Queue string
	// Payload is what is pushed onto Queue, e.g. the task as JSON.
	Payload string
	// Counter is an optional field of Batch.Stats incremented by one if the
	// link is new, e.g. "routed:3".
	Counter string
}

// Batch is what Admit commits in one atomic script: typically every detail
// link of one list page. All keys (Queue, Stats, OnceKey) must share the
// filter namespace's hash tag.
type Batch struct {
	// Candidates are checked and inserted in order; a repeat of an earlier
	// candidate is a duplicate.
	Candidates []Candidate
	// Stats is an optional hash: NewField is incremented by the number of
	// new candidates and DupField by the number of duplicates (either may
	// be "", or name several fields, space-separated), and each new
	// candidate's Counter by one.
	Stats              string
	NewField, DupField string
	// OnceKey and OnceMember are an optional idempotency guard: if
	// OnceMember is already in the SET OnceKey, Admit changes nothing and
	// reports AlreadyApplied; otherwise it adds it in the same script.
	OnceKey, OnceMember string
	// OnceMembers, when set instead of OnceMember, are several guards of
	// one batch (the links of several pages): if any is in OnceKey, Admit
	// changes nothing and reports AlreadyApplied; otherwise it adds them
	// all. No member may hold a newline.
	OnceMembers []string
	// Budget, when set, counts the new candidates against a job's page
	// budget as the job ledger's admission does (ledger/lua/budget.lua):
	// a new candidate the budget refuses is not enqueued; it counts as
	// new, and in SkipField, not in its Counter.
	Budget *Budget
}

// Budget is a job's page budget, as Admit counts new candidates against
// it. Its keys share the filter namespace's hash tag.
type Budget struct {
	// State is the job's state hash, Key its budget hash.
	State, Key string
	// MaxPages and MaxPagesPerHost are 0 for none.
	MaxPages, MaxPagesPerHost int64
	// SkipField names the Stats fields (space-separated) that count the
	// candidates refused.
	SkipField string
}

// onceArg is the once-guard's script argument: its members, one a line.
func (b Batch) onceArg() string {
	if len(b.OnceMembers) > 0 {
		return strings.Join(b.OnceMembers, "\n")
	}
	return b.OnceMember
}

// Result is Admit's answer.
type Result struct {
	// New says, per candidate, whether it was new (and so was enqueued).
	// It is nil when AlreadyApplied.
	New []bool
	// AlreadyApplied is true if the once-guard had been recorded before,
	// so nothing was changed.
	AlreadyApplied bool
	// Started are the queues that were empty before this batch's pushes:
	// their consumers may be idle, waiting to be told of work. A queue
	// that already held tasks is not among them; its consumer takes the
	// new ones with the old.
	Started []string
}

// Admit checks and inserts the batch's fingerprints, pushes the new ones
// onto their queues and updates the counters and the once-guard, all in ONE
// script call, so a crash leaves either all of it or none. It is not split
// into chunks: keep batches to a page's worth of links. Candidates the
// filter finds in its copies of slices (Options.CacheBytes) are duplicates
// and are not passed, but are counted in the script like the others.
func (f *Filter) Admit(ctx context.Context, b Batch) (Result, error) {
	fps := make([]canon.Fingerprint, len(b.Candidates))
	for i, c := range b.Candidates {
		fps[i] = c.FP
	}
	bt := f.batch(fps, true)
	rep, p, err := f.check(ctx, f.scripts.admit, bt, func(p plan) ([]string, []any) { return admitTail(b, p) }, parseAdmit)
	if err != nil {
		return Result{}, redisErr("dedup admit", err)
	}
	if rep.applied {
		return Result{AlreadyApplied: true}, nil
	}
	var started []string
	if strings.Contains(rep.started, "1") { // most pushes find their queue holding tasks
		for i, q := range queueKeys(passed(b, p)) {
			if i < len(rep.started) && rep.started[i] == '1' {
				started = append(started, q)
			}
		}
	}
	return Result{New: p.merge(make([]bool, 0, len(fps)), len(fps), rep.flags, false), Started: started}, nil
}

// passed is the candidates p passes to the script, in order: those the
// filter's copies of the slices did not answer.
func passed(b Batch, p plan) []Candidate {
	if p.sent == nil {
		return b.Candidates
	}
	cs := make([]Candidate, len(p.sent))
	for j, i := range p.sent {
		cs[j] = b.Candidates[i]
	}
	return cs
}

// queueKeys is the distinct queues of cs, in the order of their first
// candidate: the script's queue keys, numbered from 1.
func queueKeys(cs []Candidate) []string {
	seen := map[string]bool{}
	var keys []string
	for _, c := range cs {
		if c.Queue != "" && !seen[c.Queue] {
			seen[c.Queue] = true
			keys = append(keys, c.Queue)
		}
	}
	return keys
}

// admitTail lays out the tail keys (Stats, OnceKey, distinct queues) and
// arguments as the ledger's lua/admit.lua reads them, for the candidates p passes.
func admitTail(b Batch, p plan) ([]string, []any) {
	var keys []string
	args := []any{b.NewField, b.DupField, b.onceArg(), flag(b.Stats != ""), flag(b.OnceKey != ""), p.resolved}
	if b.Stats != "" {
		keys = append(keys, b.Stats)
	}
	if b.OnceKey != "" {
		keys = append(keys, b.OnceKey)
	}
	if bu := b.Budget; bu != nil && b.Stats != "" {
		keys = append(keys, bu.State, bu.Key)
		args = append(args, "1", bu.MaxPages, bu.MaxPagesPerHost, bu.SkipField)
	} else {
		args = append(args, "0", 0, 0, "")
	}
	cs := passed(b, p)
	qkeys := queueKeys(cs)
	index := make(map[string]int, len(qkeys))
	for i, q := range qkeys {
		index[q] = i + 1
	}
	for _, c := range cs {
		args = append(args, index[c.Queue], c.Payload, c.Counter) // 0: no queue
	}
	return append(keys, qkeys...), args
}

// parseAdmit reads Admit's reply: whether the once-guard had been
// recorded, n flags, the granule and the queues found empty.
func parseAdmit(res any, n int) (reply, error) {
	arr, ok := res.([]any)
	if !ok || len(arr) < 3 {
		return reply{}, fmt.Errorf("unexpected reply %v", res)
	}
	if applied, _ := arr[0].(int64); applied == 1 {
		return reply{applied: true}, nil
	}
	s, _ := arr[1].(string)
	g, _ := arr[2].(int64)
	if len(s) != n || len(arr) != 4 {
		return reply{}, fmt.Errorf("unexpected reply %v for %d candidates", res, n)
	}
	started, _ := arr[3].(string)
	return reply{flags: s, granule: g, started: started}, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
