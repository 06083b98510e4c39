package downloader

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/crawler-dev/crawler/internal/ctxtime"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/proxy"
)

// fetchPage takes one request from Fetch to its Result. Its steps, in
// the order a page goes through them:
//
//  1. the URL must be an absolute http(s) URL;
//  2. a job that requires proxies waits while the pool is empty, before
//     it asks anything of the site directly;
//  3. robots.txt must allow the URL (the first ask of an origin fetches
//     the file, once for the cluster); while it cannot be had, the page
//     waits for it; a request for robots.txt itself is answered from that
//     shared copy (robotsfile.go);
//  4. the host's gate lets the request go: a slot of the host's cap and a
//     time this process booked on its rate, no round trip to Redis;
//  5. a proxy is picked when the job uses them; a job that requires one
//     gives its slot back and waits with the other pages of its target
//     while none is free;
//  6. one attempt is sent, and its answer told to the gate and the proxy;
//     a redirect is followed as a request of its own, from step 3, on its
//     target's host (hopstep.go); a page whose kind says render is then
//     rendered (renderstep.go);
//  7. the answer settles the page: done (fetched, failed, skipped), or to
//     be tried again after a backoff, from step 3.
//
// Every wait ends when ctx does (the caller gave the page up, or the
// Downloader stops), and the page is then Cancelled.
func (d *Downloader) fetchPage(ctx context.Context, r *Request) Result {
	u, err := httpURL(r.URL)
	if err != nil {
		return Result{Kind: Failed, Err: fmt.Errorf("fetch %q: %w", r.URL, err)}
	}
	r.at, r.host, r.target = r.URL, politeness.HostOf(u), targetOf(u)
	if err := d.waitForPool(ctx, r, u); err != nil {
		return cancelled(err)
	}
	for {
		rule, res, ok := d.allowed(ctx, r, u)
		if !ok {
			return res
		}
		if res, ok := d.sharedRobots(ctx, r, u); ok {
			return res
		}
		pass, picked, err := d.turn(ctx, r, u, rule)
		if err != nil {
			return cancelled(err)
		}
		a, err := d.onWorker(ctx, r, pass, picked)
		if errors.Is(err, errLate) {
			continue
		}
		if err != nil {
			return cancelled(err)
		}
		if a.page != nil && a.page.Redirect != "" {
			next, res, ok := d.hop(r, a)
			if !ok {
				return res
			}
			u = next
			continue
		}
		a = d.render(ctx, r, a)
		res, wait, done := d.settle(r, a, picked)
		if done {
			return res
		}
		if err := d.sleep(ctx, wait); err != nil {
			return cancelled(err)
		}
	}
}

// cancelled is the Result of a page whose wait ended with err: the caller
// gave it up, or the Downloader stopped.
func cancelled(error) Result { return Result{Kind: Cancelled} }

// turn waits for r's turn at its host (steps 4 and 5): the gate's pass
// and, for a job that uses proxies, a proxy. A job that requires one and
// finds none free gives the pass back and waits for one with the other
// pages of its target, holding no slot meanwhile.
func (d *Downloader) turn(ctx context.Context, r *Request, u *url.URL, rule politeness.Rule) (*politeness.Pass, *proxy.Picked, error) {
	var picked *proxy.Picked
	for {
		if picked == nil && d.mustWaitForProxy(r) {
			p, err := d.waits.wait(ctx, r, u, false)
			if err != nil {
				return nil, nil, err
			}
			picked = p
		}
		pass, err := d.gates.Enter(ctx, r.host, rule)
		if err != nil {
			d.dropPick(picked)
			return nil, nil, err
		}
		if pass.Reason != politeness.ReasonNone {
			d.deps.Metrics.Politeness().Waited(r.host, pass.Waited, string(pass.Reason))
		}
		if picked != nil {
			return pass, picked, nil
		}
		busy := false
		if !d.mustWaitForProxy(r) { // others found none free while r waited for its pass
			p, err := d.pickFor(ctx, r, u)
			if err == nil {
				return pass, p, nil
			}
			busy = isBusy(err)
		}
		pass.Release()
		p, err := d.waits.wait(ctx, r, u, busy)
		if err != nil {
			return nil, nil, err
		}
		picked = p
	}
}

// onWorker sends r (step 6) on one of the process's workers
// (Options.Workers), waiting for one until ctx ends: a request abandoned
// or stopped while it waits was never sent, so it gives its host's turn
// and its proxy back and ends Cancelled. One whose turn passed meanwhile
// is not sent either (errLate): the host's rate holds on a busy machine.
func (d *Downloader) onWorker(ctx context.Context, r *Request, pass *politeness.Pass, picked *proxy.Picked) (attempt, error) {
	d.forWorker.Add(1)
	select {
	case d.workers <- struct{}{}:
		d.forWorker.Add(-1)
	case <-ctx.Done():
		d.forWorker.Add(-1)
		pass.Release()
		d.dropPick(picked)
		return attempt{}, ctx.Err()
	}
	defer func() { <-d.workers }()
	if pass.Expired() {
		pass.Release()
		d.dropPick(picked)
		d.deps.Metrics.Politeness().Waited(r.host, 0, "late")
		return attempt{}, errLate
	}
	return d.send(ctx, r, pass, picked), nil
}

// errLate is onWorker's answer for a request whose turn at its host
// passed before it got a worker or its goroutine ran (a busy machine):
// it was not sent, and waits for its host's turn again, no try charged.
var errLate = errors.New("turn at the host passed before the request could be sent")

// dropPick gives back a proxy picked for a page that will not use it.
func (d *Downloader) dropPick(p *proxy.Picked) {
	if p != nil {
		d.reportProxy(p, nil, errDropped, 0)
	}
}

// sleep waits for wait, or until ctx ends; a long wait counts as parked.
func (d *Downloader) sleep(ctx context.Context, wait time.Duration) error {
	if wait <= 0 {
		return ctx.Err()
	}
	if wait >= ParkHorizon {
		d.parked.Add(1)
		defer d.parked.Add(-1)
	}
	return ctxtime.Sleep(ctx, wait)
}
