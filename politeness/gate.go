package politeness

import (
	"slices"
	"time"
)

// gate is one host as one process sees it: the slots of the host's cap it
// holds, the times it has booked to send requests at, and the requests
// waiting for them. Its fields are guarded by Gates.mu.
type gate struct {
	host  string
	shard int
	rule  Rule
	lim   limits
	late  time.Duration // how late after its booked time a request may go
	burst int           // the burst the host is booked with (limits.booking)

	held      int  // slots of the cap this process holds (as of the last round)
	busy      int  // passes out: requests in flight
	share     int  // this process's fair share of the cap, as of the last round
	contended bool // some process held less than its share at the last round
	reported  int  // the want the last settling round told
	settledAt time.Time
	retryAt   time.Time     // a fruitless ask for slots is not repeated before
	paused    time.Time     // no request starts before this
	asking    bool          // a round is settling the host now
	stale     bool          // the process's hold lapsed: its entry must be settled again
	starvedAt time.Time     // a request's booked time had come but no slot was free
	ranDryAt  time.Time     // when a slot was last free but no booked time had come
	lastAsk   int           // the times the last round asked for
	askedAt   time.Time     // when the last round asked for times
	holdTime  time.Duration // how long a request holds its slot, smoothed

	booked  bookings // times this process may send at, on its own clock
	waiters []*waiter
	peak    int       // most requests busy or waiting since peakAt
	peakAt  time.Time // when peak was last reached
	fb      feedback  // answers not told to Redis yet
	toldAt  time.Time // when answers were last told
	watched bool      // the host is slowed, or has throttled answers lately

	passes  int     // passes given since paceAt
	perSec  float64 // passes per second, smoothed: how fast waiters move
	paceAt  time.Time
	started time.Time
	timer   *time.Timer // wakes the gate at its next booked time
}

// waiter is a request waiting at the gate.
type waiter struct {
	ch     chan *Pass
	since  time.Time
	reason Reason
}

// feedback is what a process has to tell a host's budget about its
// answers since the last round that told it.
type feedback struct {
	ok, throttled int
	pauseMS       int64 // a 429's Retry-After: the host pauses for everyone
	retryAfterMS  int64 // a 503's Retry-After: a pause only if the host is cut
	urgent        bool  // a pause the others must hear of at once
}

func newGate(host string, shard int, now time.Time) *gate {
	return &gate{host: host, shard: shard, started: now, peakAt: now, paceAt: now}
}

// setRule makes rule the host's rule from now on: the last rule a request
// came with wins. A slower rule (a Crawl-delay learned from robots.txt,
// say) drops the times booked at the faster one: they were spaced for the
// old rate, and the requests waiting for them would reach the site at it.
func (g *gate) setRule(rule Rule, o Options) {
	if rule != g.rule || g.lim.cap == 0 {
		slower := g.lim.cap != 0 && rule.limits(o.DefaultRPS).intervalMS > g.lim.intervalMS
		g.rule, g.lim = rule, rule.limits(o.DefaultRPS)
		g.late, g.burst = g.lim.booking(o.MaxLate, clockError)
		if slower {
			g.booked.clear()
		}
	}
}

// interval is the time between two requests at the rule's full rate.
func (g *gate) interval() time.Duration {
	return time.Duration(g.lim.intervalMS * float64(time.Millisecond))
}

// demand is how many requests the process has for the host now.
func (g *gate) demand() int { return g.busy + len(g.waiters) }

// slotDemand is how many slots the process could use soon: its requests
// in flight, and of those waiting, the ones the host's rate can start
// within window (those whose booked time comes in it, and as many more as
// the rate adds in that long; one at least while any waits), or all of
// them when slots held its requests back within linger. A request waiting
// for its turn at a polite rate needs no slot yet: counting it would tell
// every host a want of its cap and shift the shares with every take.
func (g *gate) slotDemand(now time.Time, window, linger time.Duration) int {
	w := len(g.waiters)
	switch {
	case w == 0:
		return g.busy
	case now.Sub(g.starvedAt) < linger:
		return g.busy + w
	}
	ready := 0
	for _, at := range g.booked.at {
		if at.Sub(now) >= window {
			break
		}
		ready++
	}
	if interval := g.interval(); interval > 0 {
		ready += int(window / interval)
	}
	return g.busy + max(1, min(ready, w))
}

// notePeak records the slot demand, for the want the next round reports.
func (g *gate) notePeak(now time.Time, window, linger time.Duration) {
	if d := g.slotDemand(now, window, linger); d >= g.peak {
		g.peak, g.peakAt = d, now
	}
}

// want is how many slots the process could use: its peak slot demand
// over the last linger, at most the cap.
func (g *gate) want(now time.Time, window, linger time.Duration) int {
	if now.Sub(g.peakAt) > linger {
		g.peak, g.peakAt = g.slotDemand(now, window, linger), now
	}
	return min(g.peak, g.lim.cap)
}

// usable is how many slots are free for new requests: those held, at most
// the share (the rest go back), less those in use. A holding that may
// have lapsed (valid is false) is not used.
func (g *gate) usable(valid bool) int {
	if !valid {
		return 0
	}
	return min(g.held, g.share) - g.busy
}

// blocked says what keeps a request from passing now, or ReasonNone.
func (g *gate) blocked(now time.Time, valid bool) Reason {
	switch {
	case now.Before(g.paused):
		return ReasonPaused
	case g.usable(valid) <= 0:
		return ReasonFull
	case !g.booked.ready(now, g.late):
		return ReasonRate
	}
	return ReasonNone
}

// take uses a slot and a booked time for one request, and returns the
// latest the request may go: its booked time and the lateness allowed.
func (g *gate) take() time.Time {
	g.busy++
	g.passes++
	return g.booked.take().Add(g.late)
}

// remove takes w out of the waiters; false if it was handed a pass.
func (g *gate) remove(w *waiter) bool {
	i := slices.Index(g.waiters, w)
	if i < 0 {
		return false
	}
	g.waiters = slices.Delete(g.waiters, i, i+1)
	return true
}

// idle reports a gate with nothing to do and nothing held or told: it can
// go, with good answers nobody needs to hear of (the host is not
// watched).
func (g *gate) idle() bool {
	return g.busy == 0 && len(g.waiters) == 0 && g.held == 0 && g.reported == 0 && !g.asking && !g.stale &&
		g.fb.throttled == 0 && !g.fb.urgent && (g.fb.ok == 0 || !g.watched)
}

// noteHold records how long a request held its slot (from its pass to
// its end), smoothed.
func (g *gate) noteHold(d time.Duration) {
	if g.holdTime == 0 {
		g.holdTime = d
		return
	}
	g.holdTime = (4*g.holdTime + d) / 5
}

// notePace folds the passes since the last call into the gate's pace.
func (g *gate) notePace(now time.Time) {
	elapsed := now.Sub(g.paceAt)
	if elapsed < 100*time.Millisecond {
		return
	}
	rate := float64(g.passes) / elapsed.Seconds()
	g.passes, g.paceAt = 0, now
	if g.perSec == 0 {
		g.perSec = rate
		return
	}
	g.perSec = 0.7*g.perSec + 0.3*rate
}

// parked is how many waiters are not expected to pass within horizon:
// all of them while the host is paused that long; else those beyond what
// the bookings held and the host's rate (all of it, at best) can start in
// that long, or beyond what the gate passed in that long lately, if more.
func (g *gate) parked(now time.Time, horizon time.Duration) int {
	n := len(g.waiters)
	switch {
	case n == 0:
		return 0
	case g.paused.Sub(now) >= horizon:
		return n
	}
	soon, from := 0, now
	for _, at := range g.booked.at {
		if at.Sub(now) < horizon {
			soon++
		}
		from = later(from, at)
	}
	if interval := g.interval(); interval > 0 {
		soon += int(now.Add(horizon).Sub(from) / interval)
	} else {
		soon = n
	}
	parked := max(n-soon, 0)
	if g.perSec > 0 {
		parked = max(parked, n-int(g.perSec*horizon.Seconds())-g.booked.len())
	}
	return parked
}

// bookings are the times a process booked to send requests to a host at,
// on its own clock, in order: each may be used from its time until late
// after it, once.
type bookings struct{ at []time.Time }

// drop forgets the bookings too late to use at now.
func (b *bookings) drop(now time.Time, late time.Duration) {
	i := 0
	for i < len(b.at) && now.Sub(b.at[i]) > late {
		i++
	}
	if i > 0 {
		b.at = slices.Delete(b.at, 0, i)
	}
}

// ready reports whether a booking can be used at now.
func (b *bookings) ready(now time.Time, late time.Duration) bool {
	b.drop(now, late)
	return len(b.at) > 0 && !b.at[0].After(now)
}

// next is the earliest booking, if any.
func (b *bookings) next() (time.Time, bool) {
	if len(b.at) == 0 {
		return time.Time{}, false
	}
	return b.at[0], true
}

// last is the latest booking; there must be one.
func (b *bookings) last() time.Time { return b.at[len(b.at)-1] }

// take uses the earliest booking and returns its time.
func (b *bookings) take() time.Time {
	if len(b.at) == 0 {
		return time.Time{}
	}
	at := b.at[0]
	b.at = b.at[1:]
	return at
}

// add books more times. A host's times only grow in Redis, but the
// process's reading of Redis's clock may move a little between rounds.
func (b *bookings) add(at ...time.Time) {
	b.at = append(b.at, at...)
	if !slices.IsSortedFunc(b.at, time.Time.Compare) {
		slices.SortFunc(b.at, time.Time.Compare)
	}
}

// len is how many bookings are held.
func (b *bookings) len() int { return len(b.at) }

// clear drops every booking: the host paused.
func (b *bookings) clear() { b.at = b.at[:0] }
