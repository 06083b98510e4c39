package politeness

import (
	"slices"
	"time"
)

// gate is one host as one process sees it: the slots of the host's cap it
// holds, the rate tokens it has in stock, and the requests waiting for
// them. Its fields are guarded by Gates.mu.
type gate struct {
	host      string
	rule      Rule
	lim       limits
	life      time.Duration // how long rate tokens keep (limits.stock)
	gcraBurst int           // the burst the GCRA grants with (limits.stock)

	held   int   // slots of the cap this process holds (as of the last sync)
	busy   int   // passes out: requests in flight
	tokens stock // rate tokens
	share  int   // this process's fair share of the cap, as of the last sync

	contended  bool      // some process held less than its share at the last sync
	validUntil time.Time // the holding lapses in Redis after this, on our clock
	paused     time.Time // no request starts before this
	rateAt     time.Time // asking for tokens again may grant some from then
	retryAt    time.Time // a fruitless ask for slots is not repeated before
	lastSync   time.Time
	syncing    bool
	registered bool // the holders hash has an entry of ours
	reported   int  // the want the last sync told

	waiters []*waiter
	peak    int       // most requests busy or waiting since peakAt
	peakAt  time.Time // when peak was last reached
	fb      feedback  // answers not told to Redis yet

	passes  int     // passes given since the last sync
	perSec  float64 // passes per second, smoothed: how fast waiters move
	started time.Time
}

// waiter is a request waiting at the gate.
type waiter struct {
	ch     chan *Pass
	since  time.Time
	reason Reason
}

// feedback is what a process has to tell a host's budget about its
// answers since the last sync.
type feedback struct {
	ok, throttled int
	pauseMS       int64 // a 429's Retry-After: the host pauses for everyone
	retryAfterMS  int64 // a 503's Retry-After: a pause only if the host is cut
	urgent        bool  // a pause the others must hear of at once
}

func newGate(host string, now time.Time) *gate {
	return &gate{host: host, started: now, peakAt: now}
}

// setRule makes rule the host's rule from now on: the last rule a request
// came with wins.
func (g *gate) setRule(rule Rule, o Options) {
	if rule != g.rule || g.lim.cap == 0 {
		g.rule, g.lim = rule, rule.limits(o.DefaultRPS)
		g.life, g.gcraBurst = g.lim.stock(o.StockLife)
	}
}

// hasTokens reports whether the stock of rate tokens can be used now.
func (g *gate) hasTokens(now time.Time) bool { return g.tokens.left(now) > 0 }

// lowOnTokens reports a stock, of tokens that keep, down to a quarter of
// what the last grant brought while requests wait or run: the next is
// asked for now, so it comes before the stock runs out.
func (g *gate) lowOnTokens(now time.Time) bool {
	left := g.tokens.left(now)
	return g.life > 0 && left > 0 && left*4 <= g.tokens.granted && g.demand() > 0
}

// stock is one process's rate tokens for a host: the last grant and what
// is left of the one before, each good until its own time (a token is
// used by the end of its life, never later).
type stock struct {
	n, prev          int
	until, prevUntil time.Time
	granted          int // the last grant
}

// left is how many tokens can be used at now.
func (s *stock) left(now time.Time) int {
	n := 0
	if now.Before(s.until) {
		n += s.n
	}
	if now.Before(s.prevUntil) {
		n += s.prev
	}
	return n
}

// take uses one token, the oldest first.
func (s *stock) take(now time.Time) {
	if s.prev > 0 && now.Before(s.prevUntil) {
		s.prev--
		return
	}
	s.n--
}

// add puts a new grant of n tokens, good until until, in the stock; what
// is left of the last grant stays good until its own end.
func (s *stock) add(n int, until time.Time, now time.Time) {
	s.prev, s.prevUntil = 0, time.Time{}
	if now.Before(s.until) {
		s.prev, s.prevUntil = s.n, s.until
	}
	s.n, s.until, s.granted = n, until, n
}

// drop throws the stock away.
func (s *stock) drop() { *s = stock{} }

// ends is when the stock, or a part of it, is dropped next.
func (s *stock) ends(now time.Time) time.Time {
	if s.prev > 0 && now.Before(s.prevUntil) {
		return s.prevUntil
	}
	return s.until
}

// demand is how many requests the process has for the host now.
func (g *gate) demand() int { return g.busy + len(g.waiters) }

// notePeak records the demand, for the want the next sync reports.
func (g *gate) notePeak(now time.Time) {
	if d := g.demand(); d >= g.peak {
		g.peak, g.peakAt = d, now
	}
}

// want is how many slots the process could use: its peak demand over the
// last Linger, at most the cap.
func (g *gate) want(now time.Time, linger time.Duration) int {
	if now.Sub(g.peakAt) > linger {
		g.peak, g.peakAt = g.demand(), now
	}
	return min(g.peak, g.lim.cap)
}

// usable is how many slots are free for new requests: those held, at most
// the share (the rest go back), less those in use. A holding that may have
// lapsed is not used.
func (g *gate) usable(now time.Time) int {
	if !now.Before(g.validUntil) {
		return 0
	}
	return min(g.held, g.share) - g.busy
}

// blocked says what keeps a request from passing now, or ReasonNone.
func (g *gate) blocked(now time.Time) Reason {
	switch {
	case now.Before(g.paused):
		return ReasonPaused
	case g.usable(now) <= 0:
		return ReasonFull
	case !g.hasTokens(now):
		return ReasonRate
	}
	return ReasonNone
}

// take uses a slot and a token for one request.
func (g *gate) take(now time.Time) {
	g.busy++
	g.tokens.take(now)
	g.passes++
}

// dispatch hands passes to the waiters, oldest first, while slots and
// tokens last.
func (g *gate) dispatch(gs *Gates, now time.Time) {
	for len(g.waiters) > 0 && g.blocked(now) == ReasonNone {
		w := g.waiters[0]
		g.waiters[0] = nil
		g.waiters = g.waiters[1:]
		g.take(now)
		w.ch <- &Pass{gates: gs, gate: g, Waited: now.Sub(w.since), Reason: w.reason, granted: now}
	}
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

// idle reports a gate with nothing to do and nothing held: it can go.
func (g *gate) idle() bool {
	return g.busy == 0 && len(g.waiters) == 0 && g.held == 0 && !g.registered && !g.syncing && g.fb == (feedback{})
}

// parked is how many waiters are not expected to pass within horizon:
// all of them while the host is paused or its rate makes them wait that
// long, else those beyond what the gate passed in that long lately.
func (g *gate) parked(now time.Time, horizon time.Duration) int {
	n := len(g.waiters)
	switch {
	case n == 0:
		return 0
	case g.paused.Sub(now) >= horizon, !g.hasTokens(now) && g.rateAt.Sub(now) >= horizon:
		return n
	case g.perSec > 0:
		return max(n-int(g.perSec*horizon.Seconds()), 0)
	}
	return 0
}
