package politeness

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// Lease is one request's place in a host's concurrency cap. It counts
// until Release or Done, or until Options.LeaseTTL passes without Renew,
// so a process that dies holding it frees it by itself.
type Lease struct {
	budget  *Budget
	host    string
	token   string
	granted time.Time // this process's clock
}

// Host is the host the lease is for.
func (l *Lease) Host() string { return l.host }

// Release gives the lease back without saying how the request went.
func (l *Lease) Release(ctx context.Context) error {
	return l.budget.report(ctx, l.host, l.token, "", 0)
}

// Done gives the lease back and reports the response in the same round
// trip: the status feeds the host's backoff (see Budget.Feedback) and a
// retryAfter > 0 (from a Retry-After header) pauses the host (see
// Budget.Pause). Status 0 means no response.
func (l *Lease) Done(ctx context.Context, status int, retryAfter time.Duration) error {
	return l.budget.report(ctx, l.host, l.token, feedback(status), l.budget.pauseMS(retryAfter))
}

// Renew keeps the lease for another Options.LeaseTTL, for a request that
// runs long. It returns ErrLeaseLost if the lease had already expired.
func (l *Lease) Renew(ctx context.Context) error {
	lost, err := l.budget.RenewMany(ctx, []*Lease{l})
	switch {
	case err != nil:
		return err
	case len(lost) > 0:
		return fmt.Errorf("renew lease on %s: %w", l.host, ErrLeaseLost)
	}
	return nil
}

// RenewMany keeps leases for another Options.LeaseTTL in one round trip
// (one script call per host, pipelined) and returns the ones that had
// already expired: those no longer count against their host's cap.
func (b *Budget) RenewMany(ctx context.Context, leases []*Lease) ([]*Lease, error) {
	if len(leases) == 0 {
		return nil, nil
	}
	byHost := map[string][]*Lease{}
	var hosts []string
	for _, l := range leases {
		if byHost[l.host] == nil {
			hosts = append(hosts, l.host)
		}
		byHost[l.host] = append(byHost[l.host], l)
	}
	keys := make([][]string, len(hosts))
	args := make([][]any, len(hosts))
	for i, h := range hosts {
		keys[i] = []string{b.opts.Keys.Host(h).Leases()}
		args[i] = append(make([]any, 0, len(byHost[h])+1), b.opts.LeaseTTL.Milliseconds())
		for _, l := range byHost[h] {
			args[i] = append(args[i], l.token)
		}
	}
	cmds, err := evalMany(ctx, b.rdb, renewScript, keys, args)
	if err != nil {
		return nil, fmt.Errorf("renew %d leases: %w", len(leases), err)
	}
	var lost []*Lease
	for i, c := range cmds {
		lost = append(lost, lostLeases(byHost[hosts[i]], c.Val())...)
	}
	return lost, nil
}

// lostLeases picks from leases the ones whose tokens renew.lua returned.
func lostLeases(leases []*Lease, reply any) []*Lease {
	tokens, _ := reply.([]any)
	if len(tokens) == 0 {
		return nil
	}
	gone := map[string]bool{}
	for _, t := range tokens {
		s, _ := t.(string)
		gone[s] = true
	}
	var lost []*Lease
	for _, l := range leases {
		if gone[l.token] {
			lost = append(lost, l)
		}
	}
	return lost
}

// Pause stops every process of the cluster from starting requests to host
// for d (capped at Options.MaxPause), as a 429 or 503 with Retry-After
// asks. A pause never shortens one already running.
func (b *Budget) Pause(ctx context.Context, host string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return b.report(ctx, normalize(host), "", "", b.pauseMS(d))
}

// Feedback tells the host's backoff how a request went: 429 and 503 cut
// the host's rate by Options.Cut (at most once per Options.CutEvery), any
// other answer below 500 raises it by Options.Raise back towards the
// rule's rate; 5xx and no response (0) leave it. Other processes see the
// new rate at their next Acquire.
func (b *Budget) Feedback(ctx context.Context, host string, status int) error {
	f := feedback(status)
	if f == "" {
		return nil
	}
	return b.report(ctx, normalize(host), "", f, 0)
}

func feedback(status int) string {
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		return "cut"
	case status >= 200 && status < 500:
		return "raise"
	}
	return ""
}

func (b *Budget) pauseMS(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(min(d, b.opts.MaxPause).Milliseconds(), 1)
}

// report runs report.lua: give a lease back, adjust the factor, pause.
func (b *Budget) report(ctx context.Context, host, token, fb string, pauseMS int64) error {
	if host == "" {
		return fmt.Errorf("report: %w", ErrNoHost)
	}
	var r hostReport
	if token != "" {
		r.tokens = []string{token}
	}
	r.add(fb, pauseMS)
	err := reportScript.Run(ctx, b.rdb, b.hostKeys(host), b.reportArgs(r)...).Err()
	if err != nil {
		return fmt.Errorf("report to %s budget: %w", host, err)
	}
	return nil
}

// hostReport is what a process has to tell one host's budget: the leases
// it gives back and how the requests went.
type hostReport struct {
	tokens       []string
	cuts, raises int
	pauseMS      int64
}

// add counts one answer's feedback and pause.
func (r *hostReport) add(fb string, pauseMS int64) {
	switch fb {
	case "cut":
		r.cuts++
	case "raise":
		r.raises++
	}
	r.pauseMS = max(r.pauseMS, pauseMS)
}

// reportArgs lays a report out as report.lua reads it.
func (b *Budget) reportArgs(r hostReport) []any {
	o := b.opts
	args := make([]any, 0, len(r.tokens)+12)
	args = append(args, len(r.tokens))
	for _, t := range r.tokens {
		args = append(args, t)
	}
	return append(args, r.cuts, r.raises, r.pauseMS, o.Cut, o.Raise, o.MinFactor, o.CutEvery.Milliseconds(),
		o.StateTTL.Milliseconds(), cluster.RateFactor, cluster.RateCutAt)
}
