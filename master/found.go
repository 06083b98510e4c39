package master

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/queue"
)

// foundBatch is how many Found entries one take gets.
const foundBatch = 64

// drainFound routes the links slaves found on item pages, as a list page's
// links are routed, until ctx ends: each entry is taken under a lease and
// committed once routed, so an entry whose master died is routed by the
// next one, and the dupefilter's once-guard admits its items once.
func (r *jobRunner) drainFound(ctx context.Context, round int64) error {
	for ctx.Err() == nil {
		if err := r.fenced(); err != nil {
			return err
		}
		if r.m.liveRoutes() == nil {
			sleep(ctx, idleWait/4)
			continue
		}
		entries, err := r.found.Take(ctx, foundBatch, r.m.opts.ListLease)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("take found links", zap.Error(err))
			}
			sleep(ctx, r.m.opts.Tick)
			continue
		}
		for _, d := range entries {
			r.settleFound(ctx, d, r.routeFound(ctx, round, d))
		}
		if len(entries) == 0 {
			sleep(ctx, idleWait/4)
		}
	}
	return nil
}

// routeFound routes one Found entry and commits it with the counters of
// its page's kind. One that cannot be decoded, or was delivered too often,
// is dropped: its links are not discovered, so no counter misses them.
func (r *jobRunner) routeFound(ctx context.Context, round int64, d queue.Delivery) error {
	f, err := cluster.DecodeFoundLinks(d.Entry)
	var links []extract.Link
	if err == nil {
		links, err = r.foundLinks(f)
	}
	if err != nil || d.Count > r.m.opts.MaxDeliveries {
		r.log.Error("drop found links", zap.String("entry", d.Entry), zap.Error(err), zap.Int("deliveries", d.Count))
		return r.frontier.commitFound(ctx, round, d.Entry, nil)
	}
	counters := kindCounters(f.Kind, f.RuleFound, f.Empty)
	page := cluster.ListPage{URL: f.Page}
	if err := r.route(ctx, round, page, "found:"+pageOnce(f.Page), links, counters); err != nil {
		return err
	}
	return r.frontier.commitFound(ctx, round, d.Entry, counters)
}

// settleFound notes why a Found entry was not committed; its lease lapses
// and reclaimFound puts it back.
func (r *jobRunner) settleFound(ctx context.Context, d queue.Delivery, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	if errors.Is(err, errFenced) {
		r.lost.Store(true)
		return
	}
	r.log.Warn("found links not routed; they will be again", zap.Error(err))
	if _, nerr := r.found.Note(ctx, d.Entry, err.Error()); nerr != nil {
		r.log.Warn("note found links failure", zap.Error(nerr))
	}
}

// reclaimFound puts back the Found entries whose lease lapsed.
func (r *jobRunner) reclaimFound(ctx context.Context) {
	if n, err := r.found.Reclaim(ctx); err != nil {
		r.log.Warn("reclaim found links", zap.Error(err))
	} else if n > 0 {
		r.log.Info("found links put back after lease", zap.Int("entries", n))
	}
}

// dropFound deletes the links slaves found that no master will route any
// more: the job was cancelled, and links not routed were never
// discovered, so no counter misses them.
func (r *jobRunner) dropFound(ctx context.Context) {
	if err := r.m.deps.Redis.Del(ctx, r.keys.Found(), r.keys.FoundActive(), r.keys.FoundAttempts()).Err(); err != nil {
		r.log.Warn("drop the found links of a cancelled job", zap.Error(err))
	}
}
