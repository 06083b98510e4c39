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
	return Result{New: p.merge(make([]bool, 0, len(fps)), len(fps), rep.flags, false)}, nil
}

// admitTail lays out the tail keys (Stats, OnceKey, distinct queues) and
// arguments as lua/tail_admit.lua reads them, for the candidates p passes.
func admitTail(b Batch, p plan) ([]string, []any) {
	var keys []string
	args := []any{b.NewField, b.DupField, b.onceArg(), flag(b.Stats != ""), flag(b.OnceKey != ""), p.resolved}
	if b.Stats != "" {
		keys = append(keys, b.Stats)
	}
	if b.OnceKey != "" {
		keys = append(keys, b.OnceKey)
	}
	queues := map[string]int{}
	var qkeys []string
	add := func(c Candidate) {
		q := 0
		if c.Queue != "" {
			if q = queues[c.Queue]; q == 0 {
				qkeys = append(qkeys, c.Queue)
				q = len(qkeys)
				queues[c.Queue] = q
			}
		}
		args = append(args, q, c.Payload, c.Counter)
	}
	if p.sent == nil {
		for _, c := range b.Candidates {
			add(c)
		}
	}
	for _, i := range p.sent {
		add(b.Candidates[i])
	}
	return append(keys, qkeys...), args
}

// parseAdmit reads Admit's reply: whether the once-guard had been
// recorded, n flags and the granule.
func parseAdmit(res any, n int) (reply, error) {
	arr, ok := res.([]any)
	if !ok || len(arr) != 3 {
		return reply{}, fmt.Errorf("unexpected reply %v", res)
	}
	if applied, _ := arr[0].(int64); applied == 1 {
		return reply{applied: true}, nil
	}
	s, _ := arr[1].(string)
	g, _ := arr[2].(int64)
	if len(s) != n {
		return reply{}, fmt.Errorf("%d flags for %d candidates", len(s), n)
	}
	return reply{flags: s, granule: g}, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
