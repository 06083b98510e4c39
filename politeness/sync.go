package politeness

import (
	"context"
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/ctxtime"
)

// Run keeps the gates in sync with the hosts' budgets until ctx ends: each
// round syncs every host that is due, in one round trip, and then sleeps
// until the next is due or a request needs something. Then it gives back
// every slot the process holds and returns nil. A Redis failure is logged
// and retried after a second; meanwhile no request starts on slots that
// may have lapsed.
func (g *Gates) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		calls := g.due(g.now(), false)
		if len(calls) > 0 && !g.sync(ctx, calls) {
			_ = ctxtime.Sleep(ctx, time.Second)
			continue
		}
		g.idle(ctx)
	}
	g.releaseAll()
	return nil
}

// releaseAll gives back every slot held, in one round trip with a few
// seconds of its own: a graceful stop frees its slots at once.
func (g *Gates) releaseAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if calls := g.due(g.now(), true); len(calls) > 0 {
		g.sync(ctx, calls)
	}
}

// syncCall is one host's sync as sent: what the reply is applied to.
type syncCall struct {
	gate *gate
	keep int
	ask  int
	fb   feedback
	sent time.Time
	args []any
}

// due picks the hosts to sync now and builds their calls; final gives
// back everything (the process stops).
func (g *Gates) due(now time.Time, final bool) []*syncCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	var calls []*syncCall
	for host, gt := range g.hosts {
		gt.dispatch(g, now) // a pause or a wait for tokens may have ended
		switch {
		case gt.syncing:
		case final:
			if gt.registered || gt.held > 0 {
				calls = append(calls, g.call(gt, now, 0, 0, 0))
			}
		case gt.idle():
			delete(g.hosts, host)
		case g.isDue(gt, now):
			calls = append(calls, g.plan(gt, now))
		}
	}
	return calls
}

// isDue reports whether gt needs a sync now: a pause must be told, its
// waiters need slots or tokens that a sync may bring, it holds slots
// beyond its share that others may use, or its heartbeat is due.
func (g *Gates) isDue(gt *gate, now time.Time) bool {
	waiting := len(gt.waiters) > 0 && !now.Before(gt.paused)
	switch {
	case gt.fb.urgent:
		return true
	case waiting && gt.usable(now) <= 0 && !now.Before(gt.retryAt) && g.mayGrow(gt, now):
		return true
	case waiting && gt.usable(now) > 0 && !gt.hasTokens(now) && !now.Before(gt.rateAt):
		return true
	case gt.lowOnTokens(now) && !now.Before(gt.rateAt):
		return true // refill before the stock runs out, so no request waits for it
	case gt.held > max(gt.share, gt.busy):
		return true
	case gt.held > gt.busy && gt.want(now, g.budget.opts.Linger) < gt.reported:
		return true // its demand lingered out: the others may use what it holds
	case (gt.registered || gt.held > 0) && !now.Before(g.nextHeartbeat(gt)):
		return true
	}
	return false
}

// mayGrow reports whether a sync may bring gt more slots: its holding must
// be renewed, its share is more than it holds, its demand grew past what
// it last told, or it holds less than it told it could use (another
// process may have given slots back since: the caller asks again only
// every Options.Contended).
func (g *Gates) mayGrow(gt *gate, now time.Time) bool {
	want := gt.want(now, g.budget.opts.Linger)
	return !now.Before(gt.validUntil) || gt.held < gt.share || want > gt.reported || gt.held < want
}

// nextHeartbeat is when gt's holding must be renewed.
func (g *Gates) nextHeartbeat(gt *gate) time.Time {
	if gt.contended {
		return gt.lastSync.Add(g.budget.opts.Contended)
	}
	return gt.lastSync.Add(g.budget.opts.Heartbeat)
}

// plan builds gt's sync: keep what is in use and the share, want the peak
// demand, ask for tokens when the stock runs low.
func (g *Gates) plan(gt *gate, now time.Time) *syncCall {
	want := gt.want(now, g.budget.opts.Linger)
	keep := gt.held
	if keep > gt.share && gt.lastSync != (time.Time{}) {
		keep = max(gt.busy, gt.share)
	}
	if want == 0 {
		keep = gt.busy
	}
	ask := g.tokensToAsk(gt, now)
	if ask > 0 && !g.slotsDue(gt, now, keep, want) {
		keep = -1 // tokens only: the slots stay as they are
	}
	return g.call(gt, now, keep, want, ask)
}

// slotsDue reports whether a sync must settle gt's slots, not only bring
// tokens: its heartbeat is due, it keeps or wants another number than it
// told, or its waiters have no slot.
func (g *Gates) slotsDue(gt *gate, now time.Time, keep, want int) bool {
	return keep != gt.held || want != gt.reported || !now.Before(g.nextHeartbeat(gt)) ||
		(len(gt.waiters) > 0 && gt.usable(now) <= 0)
}

// tokensToAsk is how many rate tokens to ask for: none while the stock
// lasts (and is not low), the rate says wait or the host is idle; else
// enough for the slots free now, the demand it told, and what the gate's
// pace uses while tokens keep (each stock is dropped after its life: see
// Options.StockLife), within the burst.
func (g *Gates) tokensToAsk(gt *gate, now time.Time) int {
	if (gt.hasTokens(now) && !gt.lowOnTokens(now)) || now.Before(gt.rateAt) || gt.demand() == 0 {
		return 0
	}
	n := max(gt.usable(now), gt.reported, len(gt.waiters), 1) + int(math.Ceil(gt.perSec*gt.life.Seconds()))
	return min(n, gt.gcraBurst, g.budget.opts.MaxStock)
}

// call builds the script's arguments (lua/sync.lua) and marks gt syncing;
// the feedback sent is taken out of gt until the reply comes.
func (g *Gates) call(gt *gate, now time.Time, keep, want, ask int) *syncCall {
	o := g.budget.opts
	fb := gt.fb
	gt.fb = feedback{}
	gt.syncing = true
	if keep >= 0 {
		gt.reported = want
	}
	c := &syncCall{gate: gt, keep: keep, ask: ask, fb: fb, sent: now}
	c.args = []any{g.holder, keep, want, ask, gt.lim.intervalMS, gt.gcraBurst, gt.lim.cap,
		o.LeaseTTL.Milliseconds(), o.StateTTL.Milliseconds(),
		fb.ok, fb.throttled, fb.pauseMS, fb.retryAfterMS,
		o.Cut, o.Raise, o.MinFactor, o.CutEvery.Milliseconds(), o.Window.Milliseconds(), o.CutThrottled, o.CutShare}
	return c
}

// sync sends the calls in one round trip and applies the replies; it
// reports false when Redis failed (the calls' feedback is kept for the
// next try).
func (g *Gates) sync(ctx context.Context, calls []*syncCall) bool {
	keys := make([][]string, len(calls))
	args := make([][]any, len(calls))
	for i, c := range calls {
		keys[i], args[i] = g.budget.hostKeys(c.gate.host), c.args
	}
	cmds, err := evalMany(ctx, g.budget.rdb, syncScript, keys, args)
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range calls {
		c.gate.syncing = false
		if err != nil || cmds[i].Err() != nil {
			c.gate.fb.merge(c.fb)
			continue
		}
		g.apply(c, cmds[i].Val())
	}
	if err != nil && ctx.Err() == nil {
		g.log.Warn("sync host budgets", zap.Int("hosts", len(calls)), zap.Error(err))
	}
	return err == nil
}

// apply takes in sync.lua's reply {held, share, contended, tokens, wait_ms,
// paused_ms, lost, factor} and lets waiters through.
func (g *Gates) apply(c *syncCall, val any) {
	res, _ := val.([]any)
	if len(res) < 7 {
		return
	}
	gt, now := c.gate, g.now()
	if ce := g.log.Check(zap.DebugLevel, "host budget synced"); ce != nil {
		ce.Write(zap.String("host", gt.host), zap.Int("keep", c.keep), zap.Int("want", gt.reported), zap.Int("ask", c.ask),
			zap.Any("reply", res), zap.Int("busy", gt.busy), zap.Int("waiting", len(gt.waiters)), zap.Duration("rtt", now.Sub(c.sent)))
	}
	if c.keep >= 0 {
		g.applySlots(c, res, now)
	}
	if tokens := int(toInt64(res[3])); tokens > 0 {
		// Tokens are as late as the round trip that brought them, as any
		// grant is, plus at most their life.
		gt.tokens.add(tokens, now.Add(max(gt.life, time.Nanosecond)), now)
	}
	gt.rateAt = time.Time{}
	if wait := toInt64(res[4]); wait > 0 {
		gt.rateAt = c.sent.Add(time.Duration(wait) * time.Millisecond)
	}
	if paused := toInt64(res[5]); paused > 0 {
		gt.paused = later(gt.paused, c.sent.Add(time.Duration(paused)*time.Millisecond))
	}
	gt.dispatch(g, now)
	if gt.life == 0 {
		gt.tokens.drop()
	}
}

// applySlots takes in the slots part of a reply: what the process holds,
// its share, and for how long its holding is good.
func (g *Gates) applySlots(c *syncCall, res []any, now time.Time) {
	gt, o := c.gate, g.budget.opts
	held := int(toInt64(res[0]))
	if toInt64(res[6]) == 1 {
		g.log.Warn("slots of a host lapsed before they were renewed; asking again",
			zap.String("host", gt.host), zap.Int("held", c.keep))
	}
	gt.held, gt.share, gt.contended = held, int(toInt64(res[1])), toInt64(res[2]) == 1
	gt.registered = held > 0 || gt.reported > 0
	gt.validUntil = c.sent.Add(o.LeaseTTL - o.LeaseTTL/5)
	if held <= c.keep && len(gt.waiters) > 0 {
		gt.retryAt = now.Add(o.Contended) // nothing came free: ask again soon, not at once
	}
	gt.noteRate(now.Sub(gt.lastSync))
	gt.lastSync = c.sent
}

// noteRate folds the passes since the last sync into the gate's pace.
func (g *gate) noteRate(elapsed time.Duration) {
	if elapsed <= 0 || g.lastSync == (time.Time{}) {
		return
	}
	rate := float64(g.passes) / elapsed.Seconds()
	g.passes = 0
	if g.perSec == 0 {
		g.perSec = rate
		return
	}
	g.perSec = 0.7*g.perSec + 0.3*rate
}

// merge puts back feedback a failed sync did not deliver.
func (f *feedback) merge(o feedback) {
	f.ok += o.ok
	f.throttled += o.throttled
	f.pauseMS = max(f.pauseMS, o.pauseMS)
	f.retryAfterMS = max(f.retryAfterMS, o.retryAfterMS)
	f.urgent = f.urgent || o.urgent
}

// idle sleeps until the next host is due or something changes.
func (g *Gates) idle(ctx context.Context) {
	d := g.untilDue(g.now())
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-g.kick:
	case <-t.C:
	}
}

// untilDue is how long until some host needs a sync, at most a heartbeat.
func (g *Gates) untilDue(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := now.Add(g.budget.opts.Heartbeat)
	for _, gt := range g.hosts {
		if gt.syncing {
			continue
		}
		if g.isDue(gt, now) {
			return 0
		}
		if gt.registered || gt.held > 0 {
			next = earliest(next, g.nextHeartbeat(gt))
		}
		if gt.held > gt.busy && gt.reported > gt.demand() {
			if t := gt.peakAt.Add(g.budget.opts.Linger); t.After(now) {
				next = earliest(next, t) // its demand lingers out then
			}
		}
		if len(gt.waiters) > 0 {
			for _, t := range []time.Time{gt.retryAt, gt.rateAt, gt.paused, gt.validUntil, gt.tokens.ends(now)} {
				if t.After(now) {
					next = earliest(next, t)
				}
			}
		}
	}
	return next.Sub(now)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
