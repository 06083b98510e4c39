package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/redact"
)

// Validator keeps the pool filled with working proxies: it reads the
// sources, admits new candidates up to MaxSize, checks each proxy when its
// own schedule says so (not a full rescan), backs failing ones off and
// removes them after MaxFailedRounds, and opens a circuit breaker instead
// of emptying the pool when nearly all checks fail at once. Only the
// validator holding the lease in Redis works; others wait their turn, so
// several masters may each run one.
type Validator struct {
	rdb     redis.UniversalClient
	keys    cluster.ProxyKeys
	opts    Options
	log     *zap.Logger
	checker *checker
	judge   *JudgeServer // served by us when no URL was given
	token   string

	mu        sync.Mutex // guards the fields below; Round runs one at a time
	lastRead  time.Time
	breaker   Breaker
	lastStats []SourceStats
}

// NewValidator returns a Validator; with neither JudgeURL nor CheckURL
// set it serves a judge on a loopback port until Close.
func NewValidator(rdb redis.UniversalClient, keys cluster.Keys, opts Options) (*Validator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	v := &Validator{rdb: rdb, keys: keys.Proxies(), opts: opts, log: opts.Logger}
	if v.log == nil {
		v.log = zap.NewNop()
	}
	host, _ := os.Hostname()
	v.token = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), newToken()[:8])
	target, judge := opts.CheckURL, opts.CheckURL == ""
	if judge {
		target = opts.JudgeURL
	}
	if target == "" {
		j, err := ServeJudge("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		v.judge, target = j, j.URL()
	}
	u, _ := url.Parse(target)
	v.checker = &checker{target: u, judge: judge, timeout: opts.CheckTimeout, minAnon: opts.MinAnonymity}
	return v, nil
}

// CheckURL returns where the checks go, the judge's or the plain URL, with
// its credentials redacted: for logs and output.
func (v *Validator) CheckURL() string { return redact.URL(v.checker.target.String()) }

// Close stops the judge the validator serves, if any.
func (v *Validator) Close() error {
	if v.judge != nil {
		return v.judge.Close()
	}
	return nil
}

// Run validates every Tick until ctx ends, then gives up the lease. A
// failed round is logged and tried again on the next tick.
func (v *Validator) Run(ctx context.Context) error {
	defer v.release()
	t := time.NewTicker(v.opts.Tick)
	defer t.Stop()
	for {
		r, err := v.Round(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && !errors.Is(err, ErrLeaseHeld):
			v.log.Warn("proxy validation round failed", zap.Error(err))
		case r.Checked > 0 || r.Admitted > 0:
			v.log.Info("proxy validation round", zap.Int("admitted", r.Admitted), zap.Int("checked", r.Checked),
				zap.Int("passed", r.Passed), zap.Int("failed", r.Failed), zap.Int("removed", r.Removed),
				zap.Int("unreachable", r.Unreachable),
				zap.Bool("breaker_open", r.Breaker.Open))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RoundStats says what one round did.
type RoundStats struct {
	// Sources are the sources read this round (none when not due).
	Sources []SourceStats `json:"sources,omitempty"`
	// Admitted counts new candidates added to the schedule.
	Admitted int `json:"admitted"`
	// Full counts candidates turned away because the pool was at MaxSize.
	Full int `json:"full"`
	// Checked, Passed and Failed count the checks made; Removed the proxies
	// rejected or declared dead.
	Checked int `json:"checked"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Removed int `json:"removed"`
	// Unreachable counts the proxies not checked because they cannot
	// reach the judge: it listens on loopback and they are not on this
	// host (see Options.JudgeURL). They are kept, not blamed.
	Unreachable int `json:"unreachable"`
	// Breaker is the circuit breaker after the round.
	Breaker Breaker `json:"breaker"`
}

// Round runs one round now: takes or renews the lease (ErrLeaseHeld if
// another validator holds it), reads the sources if due or if the pool is
// below MinSize, admits new candidates, and checks every proxy that is due
// until none is. The lease is renewed while the round runs; if it is lost
// all the same (the validator stalled longer than the lease and another
// took it), the results not yet recorded are dropped and Round returns an
// error that is ErrLeaseLost.
func (v *Validator) Round(ctx context.Context) (RoundStats, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var r RoundStats
	if err := v.lease(ctx); err != nil {
		return r, err
	}
	kept, stop := v.keepLease(ctx)
	err := v.work(kept, &r)
	if lost := stop(); lost != nil {
		return r, lost
	}
	if errors.Is(err, ErrLeaseLost) {
		return r, err
	}
	v.warnUnreachable(r)
	r.Breaker = v.breaker
	if serr := v.saveStatus(ctx, r); err == nil {
		err = serr
	}
	return r, err
}

func (v *Validator) work(ctx context.Context, r *RoundStats) error {
	if err := v.refill(ctx, r); err != nil {
		return err
	}
	return v.checkDue(ctx, r)
}

// warnUnreachable logs, once a round, that proxies were left unchecked
// because the judge listens where they cannot reach it: the pool cannot
// fill until the operator says where the judge is.
func (v *Validator) warnUnreachable(r RoundStats) {
	if r.Unreachable == 0 {
		return
	}
	v.log.Error("proxy judge unreachable from proxies: they are not checked",
		zap.Int("proxies", r.Unreachable), zap.String("judge", v.CheckURL()),
		zap.String("fix", "set --proxy-judge-url to a judge the proxies can reach (see --proxy-judge-listen), "+
			"or --proxy-check-url"))
}
