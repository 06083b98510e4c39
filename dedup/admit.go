package dedup

import (
	"context"
	"fmt"
)

// Candidate is one link offered to Admit.
type Candidate struct {
	// FP is the link's fingerprint.
	FP Fingerprint
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
	// be ""), and each new candidate's Counter by one.
	Stats              string
	NewField, DupField string
	// OnceKey and OnceMember are an optional idempotency guard: if
	// OnceMember is already in the SET OnceKey, Admit changes nothing and
	// reports AlreadyApplied; otherwise it adds it in the same script.
	OnceKey, OnceMember string
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
// into chunks: keep batches to a page's worth of links.
func (f *Filter) Admit(ctx context.Context, b Batch) (Result, error) {
	fps := make([]Fingerprint, len(b.Candidates))
	for i, c := range b.Candidates {
		fps[i] = c.FP
	}
	keys, args := admitTail(b)
	res, err := f.run(ctx, f.scripts.admit, fps, keys, args)
	if err != nil {
		return Result{}, redisErr("dedup admit", err)
	}
	return parseAdmit(res, len(fps))
}

// admitTail lays out the tail keys (Stats, OnceKey, distinct queues) and
// arguments as lua/tail_admit.lua reads them.
func admitTail(b Batch) ([]string, []any) {
	var keys []string
	args := []any{b.NewField, b.DupField, b.OnceMember, flag(b.Stats != ""), flag(b.OnceKey != "")}
	if b.Stats != "" {
		keys = append(keys, b.Stats)
	}
	if b.OnceKey != "" {
		keys = append(keys, b.OnceKey)
	}
	queues := map[string]int{}
	var qkeys []string
	for _, c := range b.Candidates {
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
	return append(keys, qkeys...), args
}

func parseAdmit(res any, n int) (Result, error) {
	arr, ok := res.([]any)
	if !ok || len(arr) != 2 {
		return Result{}, fmt.Errorf("dedup admit: unexpected reply %v", res)
	}
	if applied, _ := arr[0].(int64); applied == 1 {
		return Result{AlreadyApplied: true}, nil
	}
	s, _ := arr[1].(string)
	if len(s) != n {
		return Result{}, fmt.Errorf("dedup admit: %d flags for %d candidates", len(s), n)
	}
	return Result{New: appendFlags(make([]bool, 0, n), s)}, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
