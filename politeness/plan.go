package politeness

import (
	"time"
)

// wantOf is how many slots gt could use (gate.want): its requests in
// flight and those whose booked time comes within a round's reach.
func (g *Gates) wantOf(gt *gate, now time.Time) int {
	return gt.want(now, g.demandWindow(gt), g.budget.opts.Linger)
}

// notePeak records gt's slot demand for the want the next round reports.
func (g *Gates) notePeak(gt *gate, now time.Time) {
	gt.notePeak(now, g.demandWindow(gt), g.budget.opts.Linger)
}

// demandWindow is how soon a booked time must come for its request to
// count as wanting a slot: within the next round's reach.
func (g *Gates) demandWindow(gt *gate) time.Duration {
	return g.budget.opts.Batch + g.shards[gt.shard].clock.lead()
}

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

// bookingDue is when gt must book more times, false when it needs none:
// when those it has run out (by their times, or by its pace when it is
// fast), less the lead a booking takes to come; with none, half an
// interval (at most Options.Batch) after its oldest request began to
// wait: a slow host's requests wait for their turn anyway, and the ask
// goes in a round with other hosts', not in one of its own.
func (g *Gates) bookingDue(gt *gate, now time.Time) (time.Time, bool) {
	if g.toBook(gt, now) == 0 {
		return time.Time{}, false
	}
	if gt.booked.len() == 0 {
		if len(gt.waiters) == 0 {
			return now, true // a fast host's pace: book before its requests come
		}
		return gt.waiters[0].since.Add(min(gt.interval()/2, g.budget.opts.Batch)), true
	}
	end := gt.booked.last()
	if gt.perSec > 0 {
		byPace := now.Add(time.Duration(float64(gt.booked.len()) / gt.perSec * float64(time.Second)))
		end = earliest(end, byPace)
	}
	return later(now, end.Add(-g.shards[gt.shard].clock.lead())), true
}

// slotsDue reports whether gt's slots must be settled now: its hold
// lapsed; it holds none and requests wait; a request whose booked time
// has come (or none is booked) finds no slot free and a settling may
// bring one, or its share grew while slots held its requests back lately; it holds
// more than its share (another process wants them); or its demand
// lingered out to nothing (it leaves the host). Demand that merely moves
// does not settle: with polite rates a process's requests wait for their
// booked times, not for slots, and each settling is a host's share of a
// round.
func (g *Gates) slotsDue(gt *gate, now time.Time) bool {
	valid := g.valid(gt, now)
	want := g.wantOf(gt, now)
	waiting := len(gt.waiters) > 0 && !now.Before(gt.paused)
	retry := !now.Before(gt.retryAt)
	switch {
	case gt.stale:
		return true
	case waiting && retry && (gt.held == 0 || !valid):
		return true
	case waiting && retry && gt.usable(valid) <= 0 && g.slotWanted(gt, now) && g.mayGrow(gt, want, valid):
		return true
	case waiting && retry && gt.held < min(gt.share, want) && now.Sub(gt.starvedAt) < g.budget.opts.Linger:
		return true // held back by slots lately, and its share grew
	case gt.held > max(gt.share, gt.busy):
		return true
	case want == 0 && gt.reported > 0:
		return true
	}
	return false
}

// slotWanted reports whether gt's waiters wait for a slot rather than
// for their turn: a booked time has come, or comes within the lead a
// round takes, or none is booked (toBook books none while every slot is
// in use).
func (g *Gates) slotWanted(gt *gate, now time.Time) bool {
	next, ok := gt.booked.next()
	return !ok || !next.After(now.Add(g.shards[gt.shard].clock.lead()))
}

// mayGrow reports whether a settling may bring gt more slots: its hold
// must be renewed, its share is more than it holds, its demand grew past
// what it last told (its share may grow), or it wants more than it holds
// (a process holding the rest may have left the host: nobody tells the
// others, so they ask again, spaced by applyHost's retryAt).
func (g *Gates) mayGrow(gt *gate, want int, valid bool) bool {
	return !valid || gt.held < gt.share || want > gt.reported || want > gt.held
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
	pace := g.pace(gt)
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

// pace is how many times gt would use before the bookings of its next
// round come: what it used lately at the pace it passed requests, and,
// when the booked times ran out while slots were free since its last ask
// (the pace it passed at was the bookings', not its own), twice what it
// last asked for, up to what its slots can start in that long at the time a request
// holds one: a fast host's process books more at each round until its
// slots hold it back, and no more, since a booked time it does not use is
// the host's rate lost to every process. Never more than the host's rate
// allows in that long.
func (g *Gates) pace(gt *gate) int {
	span := g.budget.opts.MinRound + g.shards[gt.shard].clock.lead()
	pace := int(gt.perSec * span.Seconds())
	if gt.ranDryAt.After(gt.askedAt) { // since its last ask
		grow := 2 * max(gt.lastAsk, 1)
		if gt.holdTime > 0 {
			grow = min(grow, max(gt.held, 1)*(int(span/gt.holdTime)+1))
		}
		pace = max(pace, grow)
	}
	if iv := gt.interval(); iv > 0 {
		pace = min(pace, int(span/iv)+gt.burst)
	}
	return pace
}

// plan builds gt's part of a round: keep what is in use and the share,
// want the peak demand, book what toBook says, tell the answers; nil
// when it needs none.
func (g *Gates) plan(gt *gate, now time.Time) *roundCall {
	ask := g.toBook(gt, now)
	// A round on its way also tells a demand that grew past what the
	// process told, while it holds less: its share may grow. A demand
	// that falls is told only when it matters (slotsDue).
	want := g.wantOf(gt, now)
	settle := g.slotsDue(gt, now) || (want > gt.reported && gt.held < want && !now.Before(gt.retryAt))
	if !settle && ask == 0 && gt.fb == (feedback{}) {
		return nil
	}
	if !settle {
		return g.call(gt, now, -1, gt.reported, ask)
	}
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
	if ask > 0 {
		gt.lastAsk, gt.askedAt = ask, now
	}
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
