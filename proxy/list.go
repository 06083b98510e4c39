package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Entry is one proxy as `crawler client proxies` shows it. It holds no
// credentials: Proxy is the redacted URL.
type Entry struct {
	ID        ID        `json:"id"`
	Proxy     string    `json:"proxy"`
	Scheme    Scheme    `json:"scheme"`
	State     State     `json:"state"`
	Score     int64     `json:"score"`
	LatencyMS float64   `json:"latency_ms"`
	Success   float64   `json:"success"` // moving average of checks and requests, 0..1
	Anonymity Anonymity `json:"anonymity,omitempty"`
	Tunnel    bool      `json:"tunnel"` // CONNECT works: https targets
	Added     time.Time `json:"added"`
	Age       Duration  `json:"age"`
	Checked   time.Time `json:"checked,omitzero"`
	NextCheck time.Time `json:"next_check,omitzero"`
	Removed   time.Time `json:"removed,omitzero"`
	// Reason is why the last check failed, or why it was removed.
	Reason       string `json:"reason,omitempty"`
	FailedRounds int64  `json:"failed_rounds"`
	Checks       int64  `json:"checks"`
	ChecksOK     int64  `json:"checks_ok"`
	// Real requests: went through, timed out, evicted it, banned it for a
	// host, failed at the target.
	OK           int64 `json:"ok"`
	Timeouts     int64 `json:"timeouts"`
	Evictions    int64 `json:"evictions"`
	Bans         int64 `json:"bans"`
	TargetErrors int64 `json:"target_errors"`
	InFlight     int64 `json:"in_flight"`
}

// Duration is a time.Duration written as text in JSON ("1h2m3s").
type Duration time.Duration

// MarshalText writes the duration as time.Duration.String does, to the
// second.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).Round(time.Second).String()), nil
}

// Listing is the pool as `crawler client proxies` shows it.
type Listing struct {
	// Proxies are the usable proxies, best first; with all, then the new
	// and failing ones, then the rejected and dead ones.
	Proxies []Entry `json:"proxies"`
	// Usable, Tracked and Removed count usable proxies, every proxy the
	// validator checks, and the rejected and dead ones remembered.
	Usable  int64 `json:"usable"`
	Tracked int64 `json:"tracked"`
	Removed int64 `json:"removed"`
	// Breaker is the validator's circuit breaker.
	Breaker Breaker `json:"breaker"`
	// Validator names the validator that wrote the status (host/pid/run).
	Validator string `json:"validator,omitempty"`
	// LastRound is when the validator last did something, and what.
	LastRound     time.Time     `json:"last_round,omitzero"`
	LastRoundDone RoundStats    `json:"last_round_stats"`
	Sources       []SourceStats `json:"sources,omitempty"`
}

// List reads the pool for display: the usable proxies, and with all the
// others too, with their reasons. It costs two round trips.
func (p *Pool) List(ctx context.Context, all bool) (*Listing, error) {
	pipe := p.rdb.Pipeline()
	usable := pipe.ZRange(ctx, p.keys.Usable(), 0, -1)
	sched := pipe.ZRangeWithScores(ctx, p.keys.Schedule(), 0, -1)
	grave := pipe.ZRange(ctx, p.keys.Graveyard(), 0, -1)
	busy := pipe.HGetAll(ctx, p.keys.Busy())
	status := pipe.HGetAll(ctx, p.keys.Status())
	clock := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("list proxies: %w", err)
	}
	next := make(map[string]time.Time, len(sched.Val()))
	for _, z := range sched.Val() {
		next[z.Member.(string)] = time.UnixMilli(int64(z.Score))
	}
	ids := usable.Val()
	if all {
		ids = append(slices.Sorted(maps.Keys(next)), grave.Val()...)
	}
	entries, err := p.readEntries(ctx, ids)
	if err != nil {
		return nil, err
	}
	l := &Listing{Proxies: []Entry{}, // [] in JSON, never null
		Usable: int64(len(usable.Val())), Tracked: int64(len(next)), Removed: int64(len(grave.Val()))}
	l.fillStatus(status.Val())
	for _, e := range entries {
		if e.State == "" || (!all && e.State != StateUsable) {
			continue // expired meanwhile, or not asked for
		}
		e.Age = Duration(clock.Val().Sub(e.Added))
		e.NextCheck = next[string(e.ID)]
		e.InFlight, _ = strconv.ParseInt(busy.Val()[string(e.ID)], 10, 64)
		l.Proxies = append(l.Proxies, e)
	}
	slices.SortStableFunc(l.Proxies, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(stateRank(a.State), stateRank(b.State)), cmp.Compare(b.Score, a.Score),
			cmp.Compare(a.ID, b.ID))
	})
	return l, nil
}

// readEntries reads the records of ids in one pipeline.
func (p *Pool) readEntries(ctx context.Context, ids []string) ([]Entry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := p.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, p.keys.Record(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("list proxies: %w", err)
	}
	out := make([]Entry, len(ids))
	for i, c := range cmds {
		out[i] = entryOf(ID(ids[i]), c.Val())
	}
	return out, nil
}

func entryOf(id ID, h map[string]string) Entry {
	n := func(f string) int64 { v, _ := strconv.ParseInt(h[f], 10, 64); return v }
	f := func(f string) float64 { v, _ := strconv.ParseFloat(h[f], 64); return v }
	t := func(f string) time.Time {
		if v := n(f); v > 0 {
			return time.UnixMilli(v)
		}
		return time.Time{}
	}
	return Entry{
		ID: id, Proxy: h[fieldProxy], Scheme: Scheme(h[fieldScheme]), State: State(h[fieldState]),
		Score: n(fieldScore), LatencyMS: f(fieldLatencyMS), Success: f(fieldSuccess),
		Anonymity: Anonymity(h[fieldAnonymity]), Tunnel: h[fieldTunnel] == "1",
		Added: t(fieldAddedMS), Checked: t(fieldCheckedMS), Removed: t(fieldRemovedMS),
		Reason: h[fieldReason], FailedRounds: n(fieldFailedRounds), Checks: n(fieldChecks),
		ChecksOK: n(fieldChecksOK), OK: n(fieldOK), Timeouts: n(fieldTimeouts),
		Evictions: n(fieldEvictions), Bans: n(fieldBans), TargetErrors: n(fieldTargetErrors),
	}
}

func stateRank(s State) int {
	return slices.Index([]State{StateUsable, StateNew, StateFailing, StateDead, StateRejected}, s)
}

// fillStatus reads the validator's status hash.
func (l *Listing) fillStatus(h map[string]string) {
	l.Breaker.Open = h[statusBreakerOpen] == "1"
	l.Breaker.Reason = h[statusBreakerReason]
	if ms, _ := strconv.ParseInt(h[statusBreakerSince], 10, 64); ms > 0 {
		l.Breaker.Since = time.UnixMilli(ms)
	}
	if ms, _ := strconv.ParseInt(h[statusRoundMS], 10, 64); ms > 0 {
		l.LastRound = time.UnixMilli(ms)
	}
	l.Validator = h[statusValidator]
	_ = json.Unmarshal([]byte(h[statusRound]), &l.LastRoundDone)
	_ = json.Unmarshal([]byte(h[statusSources]), &l.Sources)
}

// Breaker reads the validator's circuit breaker, for status pages and
// metrics.
func (p *Pool) Breaker(ctx context.Context) (Breaker, error) {
	h, err := p.rdb.HGetAll(ctx, p.keys.Status()).Result()
	if err != nil {
		return Breaker{}, fmt.Errorf("read proxy breaker: %w", err)
	}
	var l Listing
	l.fillStatus(h)
	return l.Breaker, nil
}

// Size returns the number of usable proxies.
func (p *Pool) Size(ctx context.Context) (int64, error) {
	n, err := p.rdb.ZCard(ctx, p.keys.Usable()).Result()
	if err != nil {
		return 0, fmt.Errorf("count usable proxies: %w", err)
	}
	return n, nil
}
