package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// admitChunk bounds the candidates one admit script takes.
const admitChunk = 500

// Status hash fields (cluster.ProxyKeys.Status).
const (
	statusBreakerOpen   = "breaker_open"
	statusBreakerSince  = "breaker_since_ms"
	statusBreakerReason = "breaker_reason"
	statusRoundMS       = "round_ms"
	statusRound         = "round"   // RoundStats as JSON
	statusSources       = "sources" // []SourceStats as JSON, from the last read
	statusValidator     = "validator"
)

// Breaker is the validator's circuit breaker. It opens when the check URL
// cannot be reached directly, or when nearly all the proxies usable lately
// (usable now, or evicted by real traffic and not yet removed) fail their
// checks at once; while open, failed checks change nothing (the pool is
// kept) and are tried again after BackoffBase.
type Breaker struct {
	// Open is true while the validator suspects its own network or the
	// check URL rather than the proxies.
	Open bool `json:"open"`
	// Since is when it opened.
	Since time.Time `json:"since,omitzero"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
}

// refill reads the sources when due, or every RefillInterval while the
// pool holds fewer than MinSize usable proxies, and admits what is new.
func (v *Validator) refill(ctx context.Context, r *RoundStats) error {
	if len(v.opts.Sources) == 0 {
		return nil
	}
	since := time.Since(v.lastRead)
	due := v.lastRead.IsZero() || since >= v.opts.SourceInterval
	if !due && since >= v.opts.RefillInterval {
		n, err := v.rdb.ZCard(ctx, v.keys.Usable()).Result()
		if err != nil {
			return fmt.Errorf("count usable proxies: %w", err)
		}
		due = n < int64(v.opts.MinSize)
	}
	if !due {
		return nil
	}
	proxies, stats, err := ReadSources(ctx, v.opts.HTTPClient, v.opts.Sources)
	v.lastRead, v.lastStats, r.Sources = time.Now(), stats, stats
	if err != nil {
		v.log.Warn("proxy source unreadable", zap.Error(err)) // the other sources still count
	}
	for i := 0; i < len(proxies); i += admitChunk {
		admitted, full, err := v.admit(ctx, proxies[i:min(i+admitChunk, len(proxies))])
		if err != nil {
			return err
		}
		r.Admitted, r.Full = r.Admitted+admitted, r.Full+full
	}
	return nil
}

// admit adds candidates in one script call.
func (v *Validator) admit(ctx context.Context, ps []Proxy) (admitted, full int, err error) {
	keys := make([]string, 0, 3+len(ps))
	keys = append(keys, v.keys.Schedule(), v.keys.Graveyard(), v.keys.URLs())
	own := []any{v.opts.MaxSize, v.opts.Graveyard.Milliseconds(), len(ps)}
	for _, p := range ps {
		keys = append(keys, v.keys.Record(string(p.ID())))
		own = append(own, string(p.ID()), p.URL().String(), p.Redacted(), string(p.Scheme()))
	}
	res, err := admitScript.Run(ctx, v.rdb, keys, own...).Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("admit proxies: %w", err)
	}
	return int(res[0]), int(res[3]), nil
}

// dueProxy is a proxy whose check is due.
type dueProxy struct {
	id     ID
	proxy  Proxy // zero if the stored URL does not parse
	proven bool  // usable now, or usable once and not removed since
}

// batchWaves is how many rounds of Concurrency checks one batch holds.
const batchWaves = 4

// checkDue checks due proxies batch by batch until none is due. The lease
// is kept meanwhile (keepLease): ctx ends if it is lost.
func (v *Validator) checkDue(ctx context.Context, r *RoundStats) error {
	limit := v.opts.Concurrency * batchWaves
	var probeErr error
	for first := true; ctx.Err() == nil; first = false {
		batch, err := v.due(ctx, limit)
		if err != nil || len(batch) == 0 {
			return err
		}
		if first {
			probeErr = v.checker.direct(ctx)
		}
		results := v.checkAll(ctx, batch, probeErr)
		if ctx.Err() != nil {
			break // the checks were cut short: record nothing
		}
		verdicts := v.judgeBatch(batch, results, probeErr)
		removed, err := v.record(ctx, batch, results, verdicts)
		if err != nil {
			return err
		}
		count(r, results, verdicts, removed)
		if len(batch) < limit {
			return nil
		}
	}
	return context.Cause(ctx)
}

func count(r *RoundStats, results []CheckResult, verdicts []string, removed int) {
	for i, res := range results {
		switch {
		case verdicts[i] == verdictUnreachable:
			r.Unreachable++
			continue
		case verdicts[i] == verdictHold && !res.OK:
			continue
		}
		r.Checked++
		if res.OK {
			r.Passed++
		} else {
			r.Failed++
		}
	}
	r.Removed += removed
}

// due takes the next batch of due proxies, holding each back long enough
// for the whole batch to be checked.
func (v *Validator) due(ctx context.Context, limit int) ([]dueProxy, error) {
	hold := (batchWaves + 1) * v.opts.CheckTimeout
	keys := []string{v.keys.Schedule(), v.keys.URLs(), v.keys.Usable(), v.keys.Record("")}
	res, err := dueScript.Run(ctx, v.rdb, keys, limit, hold.Milliseconds(), v.opts.ProvenWindow.Milliseconds()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("due proxies: %w", err)
	}
	out := make([]dueProxy, 0, len(res)/3)
	for i := 0; i+2 < len(res); i += 3 {
		p, _ := Parse(res[i+1])
		out = append(out, dueProxy{id: ID(res[i]), proxy: p, proven: res[i+2] == "1"})
	}
	return out, nil
}

// checkAll checks a batch, Concurrency at a time. With the check URL
// unreachable directly nothing is checked, nor are the proxies that cannot
// reach the judge.
func (v *Validator) checkAll(ctx context.Context, batch []dueProxy, probeErr error) []CheckResult {
	results := make([]CheckResult, len(batch))
	var g errgroup.Group
	g.SetLimit(v.opts.Concurrency)
	for i, d := range batch {
		switch {
		case d.proxy.IsZero():
			results[i] = CheckResult{Reason: "stored URL does not parse", Hard: true}
		case v.checker.unreachable(d.proxy):
			results[i] = CheckResult{Proxy: d.proxy, Reason: reasonJudgeUnreachable}
		case probeErr != nil:
			results[i] = CheckResult{Proxy: d.proxy, Reason: probeErr.Error()}
		default:
			g.Go(func() error {
				results[i] = v.checker.check(ctx, d.proxy)
				return nil
			})
		}
	}
	_ = g.Wait()
	return results
}

// judgeBatch turns check results into verdicts and moves the breaker.
// The breaker judges the direct probe and the checks of proven proxies
// (usable now, or lately: evicted by real traffic, say), not of new
// candidates: a list of junk failing is no sign that our network is down,
// while every proven proxy failing at once is. While it is open, nothing
// but a pass changes a proxy.
func (v *Validator) judgeBatch(batch []dueProxy, results []CheckResult, probeErr error) []string {
	verdicts := make([]string, len(results))
	checked, failed := 0, 0
	for i, d := range batch {
		if !d.proxy.IsZero() && v.checker.unreachable(d.proxy) {
			verdicts[i] = verdictUnreachable
		} else if d.proven {
			checked++
			if !results[i].OK {
				failed++
			}
		}
	}
	v.moveBreaker(checked, failed, probeErr)
	for i, res := range results {
		switch {
		case verdicts[i] != "":
		case res.OK:
			verdicts[i] = verdictOK
		case v.breaker.Open:
			verdicts[i] = verdictHold
		case res.Hard:
			verdicts[i] = verdictReject
		default:
			verdicts[i] = verdictFail
		}
	}
	return verdicts
}

// moveBreaker opens the breaker when the check URL is unreachable
// directly or nearly all proven proxies failed, and closes it otherwise.
func (v *Validator) moveBreaker(checked, failed int, probeErr error) {
	switch {
	case probeErr != nil:
		v.openBreaker(probeErr.Error())
	case checked >= v.opts.BreakerMinChecks && float64(failed) >= v.opts.BreakerRatio*float64(checked):
		v.openBreaker(fmt.Sprintf("%d of %d proxies usable lately failed their check at once: suspect our network or the check URL",
			failed, checked))
	case v.breaker.Open:
		v.log.Info("proxy circuit breaker closed", zap.String("was", v.breaker.Reason))
		v.breaker = Breaker{}
	}
}

func (v *Validator) openBreaker(reason string) {
	if !v.breaker.Open {
		v.log.Warn("proxy circuit breaker open: keeping the pool", zap.String("reason", reason))
		v.breaker.Since = time.Now()
	}
	v.breaker.Open, v.breaker.Reason = true, reason
}

// record applies a batch's verdicts in one script call, fenced by the
// lease: ErrLeaseLost if this validator no longer holds it. It returns
// how many proxies were removed.
func (v *Validator) record(ctx context.Context, batch []dueProxy, results []CheckResult, verdicts []string) (int, error) {
	keys := []string{v.keys.Usable(), v.keys.Schedule(), v.keys.Graveyard(), v.keys.URLs(),
		v.keys.Caps(), v.keys.Tunnel(), v.keys.Cooldown(), v.keys.Lease()}
	o := v.opts
	own := []any{scoreAlpha, scoreHalfLatency.Milliseconds(), o.MaxFailedRounds, o.Graveyard.Milliseconds(),
		o.BackoffBase.Milliseconds(), o.BackoffMax.Milliseconds(), o.ProxyConcurrency, v.token, len(batch)}
	for i, d := range batch {
		res := results[i]
		keys = append(keys, v.keys.Record(string(d.id)))
		delay := time.Duration(float64(o.Recheck) * (0.9 + 0.2*rand.Float64()))
		if verdicts[i] == verdictHold || verdicts[i] == verdictUnreachable {
			delay = o.BackoffBase
		}
		own = append(own, string(d.id), verdicts[i], res.Latency.Milliseconds(), boolInt(res.Tunnel),
			string(res.Anonymity), res.Reason, delay.Milliseconds(), rand.Float64())
	}
	n, err := recordScript.Run(ctx, v.rdb, keys, own...).Int()
	if err != nil {
		return 0, fmt.Errorf("record proxy checks: %w", codes.Translate(err))
	}
	return n, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// saveStatus writes the round's summary for Pool.List.
func (v *Validator) saveStatus(ctx context.Context, r RoundStats) error {
	round, _ := json.Marshal(r)
	sources, _ := json.Marshal(v.lastStats)
	var since int64
	if v.breaker.Open {
		since = v.breaker.Since.UnixMilli()
	}
	fields := []any{statusBreakerOpen, strconv.Itoa(boolInt(v.breaker.Open)), statusBreakerSince, since,
		statusBreakerReason, v.breaker.Reason, statusValidator, v.token}
	if r.Checked > 0 || r.Admitted > 0 || r.Sources != nil {
		fields = append(fields, statusRoundMS, time.Now().UnixMilli(), statusRound, round, statusSources, sources)
	}
	err := v.rdb.HSet(ctx, v.keys.Status(), fields...).Err()
	if err != nil {
		return fmt.Errorf("save proxy validator status: %w", err)
	}
	return nil
}
