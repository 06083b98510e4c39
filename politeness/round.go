package politeness

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/ctxtime"
)

// maxRoundHosts bounds the hosts of one script call (Lua's stack takes a
// few thousand arguments); a bigger round is cut into calls of one
// pipeline.
const maxRoundHosts = 400

// Run keeps the gates in sync with the hosts' budgets until ctx ends: each
// round settles every host that needs something, in one round trip (one
// script call per shard), then it sleeps until the next is due or a
// request needs something. Then it gives back every slot the process
// holds and returns nil. A Redis failure is logged and retried after a
// second; meanwhile no request starts on slots that may have lapsed.
func (g *Gates) Run(ctx context.Context) error {
	var lastRound time.Time
	for ctx.Err() == nil {
		now := g.now()
		urgentOnly := now.Sub(lastRound) < g.budget.opts.MinRound
		rounds := g.due(now, false, urgentOnly)
		if len(rounds) == 0 {
			g.idle(ctx, now, lastRound)
			continue
		}
		lastRound = now
		if !g.round(ctx, rounds) {
			_ = ctxtime.Sleep(ctx, time.Second)
			continue
		}
		g.probe(ctx, rounds)
	}
	g.releaseAll()
	return nil
}

// releaseAll gives back every slot held, in one round trip with a few
// seconds of its own: a graceful stop frees its slots at once.
func (g *Gates) releaseAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if rounds := g.due(g.now(), true, false); len(rounds) > 0 {
		g.round(ctx, rounds)
	}
}

// probe reads the clock of each shard a round just went to whose round
// trips were all slow lately (a busy machine): a booked time is only as
// exact as the process's reading of the server's clock, and one quick
// round trip among a few makes it so.
func (g *Gates) probe(ctx context.Context, rounds []*shardRound) {
	for _, r := range rounds {
		g.mu.Lock()
		sh := g.shards[r.shard]
		wanted := !r.final && sh.clock.probeWanted(g.now(), sh.lastProbe)
		if wanted {
			sh.lastProbe = g.now()
		}
		g.mu.Unlock()
		if !wanted {
			continue
		}
		sent := g.now()
		res, err := probeScript.Run(ctx, g.budget.rdb, []string{g.budget.opts.Keys.Politeness(r.shard).Live()}).Text()
		recv := g.now()
		if err != nil {
			continue
		}
		serverMS, err := strconv.ParseFloat(res, 64)
		if err != nil {
			continue
		}
		g.mu.Lock()
		sh.clock.observe(sent, recv, serverMS)
		g.mu.Unlock()
	}
}

// roundCall is one host's part of a round, as sent: what its reply is
// applied to.
type roundCall struct {
	gate            *gate
	keep, want, ask int
	lead            time.Duration
	fb              feedback
}

// shardRound is one script call: the calls of one shard (at most
// maxRoundHosts), and whether it sweeps or ends the process's hold.
type shardRound struct {
	shard        int
	calls        []*roundCall
	sweep, final bool
	sent         time.Time
}

// due picks what to settle now, by shard: when some host needs a round
// now (only one whose pause must be told, when urgentOnly), every host
// that will need one within Options.Batch goes with it; a shard whose
// slots would lapse otherwise gets a heartbeat; final gives back
// everything (the process stops).
func (g *Gates) due(now time.Time, final, urgentOnly bool) []*shardRound {
	g.mu.Lock()
	defer g.mu.Unlock()
	holds := make([]bool, len(g.shards))
	var soon []*gate
	calls := make([][]*roundCall, len(g.shards))
	trigger := false
	for host, gt := range g.hosts {
		g.dispatch(gt, now) // a pause or a wait for a booked time may have ended
		holds[gt.shard] = holds[gt.shard] || gt.held > 0 || gt.reported > 0
		switch {
		case gt.asking:
		case final:
			if gt.held > 0 || gt.reported > 0 {
				calls[gt.shard] = append(calls[gt.shard], g.call(gt, now, 0, 0, 0))
			}
		case gt.idle():
			g.forget(host, gt)
		case urgentOnly && !gt.fb.urgent:
		default:
			due := g.dueAt(gt, now)
			if !due.IsZero() && !due.After(now.Add(g.budget.opts.Batch)) {
				soon = append(soon, gt)
				trigger = trigger || !due.After(now)
			}
		}
	}
	if trigger {
		for _, gt := range soon {
			if c := g.plan(gt, now); c != nil {
				calls[gt.shard] = append(calls[gt.shard], c)
			}
		}
	}
	return g.shardRounds(calls, holds, now, final)
}

// shardRounds cuts each shard's calls into script calls, adding a
// heartbeat for a shard where the process holds slots but has nothing
// else to settle, and a sweep for a shard not swept for a heartbeat.
func (g *Gates) shardRounds(calls [][]*roundCall, holds []bool, now time.Time, final bool) []*shardRound {
	o := g.budget.opts
	var out []*shardRound
	for s, cs := range calls {
		sh := g.shards[s]
		heartbeat := holds[s] && now.Sub(sh.lastRound) >= o.Heartbeat
		if final {
			heartbeat = !sh.lastRound.IsZero()
		}
		if len(cs) == 0 && !heartbeat {
			continue
		}
		sweep := !final && now.Sub(sh.lastSweep) >= o.Heartbeat
		for i := 0; i == 0 || i < len(cs); i += maxRoundHosts {
			part := cs[i:min(i+maxRoundHosts, len(cs))]
			out = append(out, &shardRound{shard: s, calls: part, sweep: sweep && i == 0, final: final, sent: now})
		}
		sh.lastRound = now
		if sweep {
			sh.lastSweep = now
		}
	}
	return out
}

// forget drops an idle gate; its answers that no one needs go with it.
func (g *Gates) forget(host string, gt *gate) {
	if gt.timer != nil {
		gt.timer.Stop()
	}
	delete(g.hosts, host)
}

// idle sleeps until the next host or heartbeat is due, or something
// changes; a round is never sooner than Options.MinRound after the last
// but to tell a pause.
func (g *Gates) idle(ctx context.Context, now, lastRound time.Time) {
	d := g.untilDue(now)
	if early := lastRound.Add(g.budget.opts.MinRound).Sub(now); d < early {
		d = early // something is due, but not urgent: it waits for the next round
	}
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

// round sends the rounds in one pipeline and applies the replies; it
// reports false when Redis failed (the calls' answers are kept for the
// next try).
func (g *Gates) round(ctx context.Context, rounds []*shardRound) bool {
	keys := make([][]string, len(rounds))
	args := make([][]any, len(rounds))
	for i, r := range rounds {
		k := g.budget.opts.Keys.Politeness(r.shard)
		keys[i], args[i] = []string{k.Hosts(), k.Live()}, g.args(r)
	}
	cmds, err := evalMany(ctx, g.budget.rdb, roundScript, keys, args)
	recv := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, r := range rounds {
		var res []any
		if err == nil {
			res, _ = cmds[i].Val().([]any)
		}
		if len(res) < 2+replyFields*len(r.calls) {
			g.failed(r)
			continue
		}
		g.apply(r, res, recv)
	}
	if err != nil && ctx.Err() == nil {
		g.log.Warn("settle host budgets", zap.Int("calls", len(rounds)), zap.Error(err))
	}
	return err == nil
}

// failed puts back what a round that did not come through was to tell.
func (g *Gates) failed(r *shardRound) {
	for _, c := range r.calls {
		c.gate.asking = false
		c.gate.fb.merge(c.fb)
	}
}

// replyFields is how many values lua/round.lua answers per host.
const replyFields = 10

// sweepCount is how many entries of a shard's hosts hash a sweeping round
// looks at.
const sweepCount = 64

// args are round.lua's arguments for r.
func (g *Gates) args(r *shardRound) []any {
	o := g.budget.opts
	final, sweep := 0, 0
	if r.final {
		final = 1
	}
	if r.sweep {
		sweep = sweepCount
	}
	a := make([]any, 0, 13+12*len(r.calls))
	a = append(a, g.holder, o.LeaseTTL.Milliseconds(), o.StateTTL.Milliseconds(), final, sweep,
		o.Cut, o.Raise, o.MinFactor, o.CutEvery.Milliseconds(), o.Window.Milliseconds(), o.CutThrottled, o.CutShare,
		o.Horizon.Milliseconds())
	for _, c := range r.calls {
		gt := c.gate
		a = append(a, gt.host, c.keep, c.want, c.ask, millis(c.lead), gt.lim.intervalMS, gt.burst, gt.lim.cap,
			c.fb.ok, c.fb.throttled, c.fb.pauseMS, c.fb.retryAfterMS)
	}
	return a
}

// apply takes in a shard's reply {now, lapsed, then replyFields per
// host}: the server's clock, the process's hold, and each host's slots,
// bookings and pause.
func (g *Gates) apply(r *shardRound, res []any, recv time.Time) {
	sh, o := g.shards[r.shard], g.budget.opts
	serverNow := toFloat(res[0])
	sh.clock.observe(r.sent, recv, serverNow)
	if toInt64(res[1]) == 1 {
		g.lapsed(r.shard)
	}
	if !r.final {
		sh.validUntil = r.sent.Add(o.LeaseTTL - o.LeaseTTL/5)
	}
	for i, c := range r.calls {
		g.applyHost(c, res[2+i*replyFields:2+(i+1)*replyFields], serverNow, recv)
	}
	if ce := g.log.Check(zap.DebugLevel, "host budgets settled"); ce != nil {
		ce.Write(zap.Int("shard", r.shard), zap.Int("hosts", len(r.calls)), zap.Bool("sweep", r.sweep),
			zap.Bool("final", r.final), zap.Duration("rtt", recv.Sub(r.sent)), zap.Any("calls", roundLog(r.calls)))
	}
}

// roundLog describes a round's calls for the debug log: host, keep, want,
// book, and the slots and bookings the gate has now.
func roundLog(calls []*roundCall) []string {
	out := make([]string, 0, min(len(calls), 20))
	for _, c := range calls[:min(len(calls), 20)] {
		gt := c.gate
		out = append(out, fmt.Sprintf("%s keep=%d want=%d book=%d -> held=%d share=%d booked=%d waiting=%d",
			gt.host, c.keep, c.want, c.ask, gt.held, gt.share, gt.booked.len(), len(gt.waiters)))
	}
	return out
}

// lapsed forgets the slots the process held in a shard where its hold had
// lapsed (it could not renew it in time): Redis freed them. Its entries
// there are settled again, so none is counted twice.
func (g *Gates) lapsed(shard int) {
	n := 0
	for _, gt := range g.hosts {
		if gt.shard != shard || (gt.held == 0 && gt.reported == 0) {
			continue
		}
		n += gt.held
		gt.held, gt.stale = 0, true
	}
	if n > 0 {
		g.log.Warn("slots of hosts lapsed before they were renewed; asking again", zap.Int("shard", shard), zap.Int("slots", n))
	}
}

// retrySpacing is how long gt waits to ask for slots again after a round
// brought none: Contended while slots are moving (some process holds less
// than its share, so another holds more and gives them back soon); while
// every holder holds its share, Linger, the time a process that stopped
// using the host takes to leave it.
func (g *Gates) retrySpacing(gt *gate) time.Duration {
	if gt.contended || gt.held < gt.share {
		return g.budget.opts.Contended
	}
	return max(g.budget.opts.Linger, g.budget.opts.Contended)
}

// applyHost takes in one host's reply {held, share, contended, start_us,
// booked, step_us, wait_ms, paused_ms, factor_ppm, watched} and lets its waiters
// through.
func (g *Gates) applyHost(c *roundCall, v []any, serverNow float64, recv time.Time) {
	gt := c.gate
	gt.asking = false
	gt.share, gt.contended = int(toInt64(v[1])), toInt64(v[2]) == 1
	if held := int(toInt64(v[0])); held >= 0 {
		gt.held, gt.reported, gt.settledAt, gt.stale = held, c.want, recv, false
		if held <= c.keep && len(gt.waiters) > 0 {
			gt.retryAt = recv.Add(g.retrySpacing(gt)) // nothing came free: ask again later, not at once
		}
	}
	clock := &g.shards[gt.shard].clock
	start, step, lead := usToMS(v[3]), usToMS(v[5]), millis(c.lead)
	if n := int(toInt64(v[4])); n > 0 {
		at := make([]time.Time, n)
		for j := range at {
			at[j] = clock.local(serverNow + max(lead, start+float64(j)*step))
		}
		gt.booked.add(at...)
	}
	if paused := toInt64(v[7]); paused > 0 {
		gt.paused = later(gt.paused, clock.local(serverNow+float64(paused)))
		gt.booked.clear()
	}
	gt.watched = toInt64(v[9]) == 1
	gt.notePace(recv)
	g.dispatch(gt, recv)
	g.notePeak(gt, recv)
}
