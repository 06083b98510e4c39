package politeness

import (
	"time"
)

// isDue reports whether gt needs a round now.
func (g *Gates) isDue(gt *gate, now time.Time) bool {
	t := g.dueAt(gt, now)
	return !t.IsZero() && !t.After(now)
}

// dueAt is when gt next needs a round, or the zero time when nothing is
// coming until a request does something: now when its slots must be
// settled or its throttled answers told; when its booked times run out,
// less the lead a booking takes to come, while it has requests they do
// not cover; when the good answers of a watched host are due to be told.
func (g *Gates) dueAt(gt *gate, now time.Time) time.Time {
	switch {
	case gt.asking:
		return time.Time{}
	case g.slotsDue(gt, now) || gt.fb.urgent || gt.fb.throttled > 0:
		return now
	}
	t, _ := g.bookingDue(gt, now)
	if gt.watched && gt.fb.ok > 0 {
		t = earliestSet(t, gt.toldAt.Add(g.budget.opts.Contended))
	}
	return t
}

// bookingDue is when gt must book more times: at once when it has none
// for requests that wait, else when those it has run out (by their times,
// or by its pace when it is fast), less the lead a booking takes to come;
// false when it needs none.
func (g *Gates) bookingDue(gt *gate, now time.Time) (time.Time, bool) {
	if g.toBook(gt, now) == 0 {
		return time.Time{}, false
	}
	if gt.booked.len() == 0 {
		return now, true
	}
	end := gt.booked.last()
	if gt.perSec > 0 {
		byPace := now.Add(time.Duration(float64(gt.booked.len()) / gt.perSec * float64(time.Second)))
		end = earliest(end, byPace)
	}
	return later(now, end.Add(-g.shards[gt.shard].clock.lead())), true
}

// slotsDue reports whether gt's slots must be settled: its hold lapsed;
// its waiters have none free and it may get more; it holds less than it
// could use while its demand grew past what it told or its share is more
// than it holds (another process gave slots back); it holds more than
// its share; or its demand lingered out (the others may use what it
// holds, or it no longer wants any).
func (g *Gates) slotsDue(gt *gate, now time.Time) bool {
	valid := g.valid(gt, now)
	want := gt.want(now, g.budget.opts.Linger)
	waiting := len(gt.waiters) > 0 && !now.Before(gt.paused)
	retry := !now.Before(gt.retryAt)
	switch {
	case gt.stale:
		return true
	case waiting && gt.usable(valid) <= 0 && retry && g.mayGrow(gt, want, valid):
		return true
	case waiting && retry && gt.held < want && (want > gt.reported || gt.held < gt.share):
		return true
	case gt.held > max(gt.share, gt.busy):
		return true
	case want < gt.reported && (gt.held > gt.busy || want == 0):
		return true
	}
	return false
}

// mayGrow reports whether a settling may bring gt more slots: its hold
// must be renewed, its share is more than it holds, its demand grew past
// what it last told, or it holds less than it could use (another process
// may have given slots back since: the caller asks again only every
// Options.Contended).
func (g *Gates) mayGrow(gt *gate, want int, valid bool) bool {
	return !valid || gt.held < gt.share || want > gt.reported || gt.held < want
}

// toBook is how many times gt would book now: its waiters and, for a
// fast host, what its pace will use before the next round's bookings
// come, beyond the bookings it has; none while it is paused or a round is
// on its way, and none while every slot it may hold is in use (a slot
// frees first).
func (g *Gates) toBook(gt *gate, now time.Time) int {
	if gt.asking || now.Before(gt.paused) || gt.demand() == 0 {
		return 0
	}
	gt.booked.drop(now, gt.late)
	pace := int(gt.perSec * (g.budget.opts.MinRound + g.shards[gt.shard].clock.lead()).Seconds())
	n := len(gt.waiters) + pace - gt.booked.len()
	if n <= 0 {
		return 0
	}
	if valid := g.valid(gt, now); valid && gt.held >= gt.share && gt.share > 0 {
		free := gt.usable(valid)
		if free <= 0 {
			return 0
		}
		n = min(n, free+pace)
	}
	return min(n, g.budget.opts.MaxBook)
}

// plan builds gt's part of a round, or nil when it needs none within
// Options.Batch: keep what is in use and the share, want the peak demand,
// book what toBook says, tell the answers.
func (g *Gates) plan(gt *gate, now time.Time) *roundCall {
	due := g.dueAt(gt, now)
	if due.IsZero() || due.After(now.Add(g.budget.opts.Batch)) {
		return nil
	}
	ask := g.toBook(gt, now)
	// A round on its way settles the slots too when the demand changed.
	settle := g.slotsDue(gt, now) || gt.want(now, g.budget.opts.Linger) != gt.reported
	if !settle {
		return g.call(gt, now, -1, gt.reported, ask)
	}
	want := gt.want(now, g.budget.opts.Linger)
	keep := gt.held
	if keep > gt.share && !gt.settledAt.IsZero() {
		keep = max(gt.busy, gt.share)
	}
	if want == 0 {
		keep = gt.busy
	}
	if !g.valid(gt, now) && gt.held > 0 {
		keep = gt.busy // it may have lapsed: keep only what is in use
	}
	return g.call(gt, now, keep, want, ask)
}

// call builds gt's part of a round and marks it asking; the answers sent
// are taken out of gt until the reply comes.
func (g *Gates) call(gt *gate, now time.Time, keep, want, ask int) *roundCall {
	c := &roundCall{gate: gt, keep: keep, want: want, ask: ask, fb: gt.fb,
		lead: g.shards[gt.shard].clock.lead()}
	gt.fb = feedback{}
	gt.asking = true
	if c.fb != (feedback{}) {
		gt.toldAt = now
	}
	return c
}

// untilDue is how long until some host or heartbeat needs a round, at
// most a heartbeat.
func (g *Gates) untilDue(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.budget.opts
	next := now.Add(o.Heartbeat)
	holds := make([]bool, len(g.shards))
	for _, gt := range g.hosts {
		holds[gt.shard] = holds[gt.shard] || gt.held > 0 || gt.reported > 0
		if gt.asking {
			continue
		}
		if t := g.dueAt(gt, now); !t.IsZero() {
			next = earliest(next, t)
		}
		for _, t := range g.wakeups(gt) {
			if t.After(now) {
				next = earliest(next, t)
			}
		}
	}
	for s, sh := range g.shards {
		if holds[s] {
			next = earliest(next, sh.lastRound.Add(o.Heartbeat))
		}
	}
	return max(next.Sub(now), 0)
}

// wakeups are the times gt may become due without a request doing
// anything: its demand lingers out, a pause or a wait to ask for slots
// again ends.
func (g *Gates) wakeups(gt *gate) []time.Time {
	ts := []time.Time{gt.peakAt.Add(g.budget.opts.Linger)}
	if len(gt.waiters) > 0 {
		ts = append(ts, gt.retryAt, gt.paused)
	}
	return ts
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// earliestSet is the earlier of a and b, the zero time meaning none.
func earliestSet(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return earliest(a, b)
}
