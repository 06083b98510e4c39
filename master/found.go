package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
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
	wait := idleWait / 4
	for ctx.Err() == nil && !r.pausing.Load() {
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
		done := r.holdingFound(entries)
		r.routeFoundBatch(ctx, round, entries)
		done()
		if len(entries) > 0 {
			wait = idleWait / 4
			continue
		}
		sleep(ctx, wait)
		wait = min(2*wait, maxFoundWait) // a job whose items link nothing costs a take a second
	}
	return nil
}

// maxFoundWait is the longest drainFound waits between two takes that
// find nothing: the wait doubles from idleWait/4 while the found links'
// queue stays empty. A link a slave finds waits at most this long to be
// routed, beside its page's own fetch.
const maxFoundWait = time.Second

// holdingFound records that the drain routes ds, until done is called, so
// that releaseOrphanFound leaves them alone.
func (r *jobRunner) holdingFound(ds []queue.Delivery) (done func()) {
	r.mu.Lock()
	for _, d := range ds {
		r.foundHeld[d.Entry] = true
	}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		for _, d := range ds {
			delete(r.foundHeld, d.Entry)
		}
		r.mu.Unlock()
	}
}

// foundEntry is a Found entry taken, decoded, with the links to route.
type foundEntry struct {
	d     queue.Delivery
	f     cluster.FoundLinks
	links []extract.Link
}

// routeFoundBatch routes a take of Found entries. They are routed in
// groups of at most admitChunk item links, each with one admission of all
// its links to the dupefilter and one commit (routeFoundGroup), not two
// script calls an entry: a crawl whose item pages hold links sends about
// one an item. An entry that does not decode, was delivered too often, or
// holds more links than a group takes, is routed on its own; so is every
// entry of a job of several item kinds, whose links are admitted kind by
// kind.
func (r *jobRunner) routeFoundBatch(ctx context.Context, round int64, ds []queue.Delivery) {
	var group []foundEntry
	links := 0
	flush := func() {
		if len(group) > 0 {
			r.routeFoundGroup(ctx, round, group)
		}
		group, links = nil, 0
	}
	for _, d := range ds {
		f, err := cluster.DecodeFoundLinks(d.Entry)
		var fl []extract.Link
		if err == nil {
			fl, err = r.foundLinks(f)
		}
		if err != nil || d.Count > r.m.opts.MaxDeliveries || len(fl) > admitChunk || r.byKind != nil {
			r.settleFound(ctx, d, r.routeFound(ctx, round, d))
			continue
		}
		if links+len(fl) > admitChunk {
			flush()
		}
		group, links = append(group, foundEntry{d: d, f: f, links: fl}), links+len(fl)
	}
	flush()
}

// routeFoundGroup routes a group of Found entries as routeFound routes
// each: their list-kind links to the frontier, their item links through the
// dupefilter in one admission whose once-guards are the pages' (so the
// links of a page are admitted once per round however often they come, in
// whichever group), then commits them in one script call. Pages whose
// links were admitted already are read first and left out of the
// admission; should one be admitted meanwhile all the same, the group is
// routed an entry at a time instead.
func (r *jobRunner) routeFoundGroup(ctx context.Context, round int64, group []foundEntry) {
	settle := func(err error) {
		for _, e := range group {
			r.settleFound(ctx, e.d, err)
		}
	}
	members := make([]string, len(group))
	for i, e := range group {
		members[i] = "found:" + pageOnce(e.f.Page)
	}
	admitted, err := r.m.deps.Redis.SMIsMember(ctx, r.keys.Committed(round), anys(members)...).Result()
	if err != nil {
		settle(fmt.Errorf("read which found links were admitted: %w", err))
		return
	}
	table := r.m.liveRoutes()
	if table == nil {
		settle(errors.New("no live slave to route to"))
		return
	}
	var next []pageRef
	var cands []dedup.Candidate
	var slaves []int
	var once []string
	inGroup := map[string]bool{} // a page sent twice is admitted once
	commits := make([]foundCommit, len(group))
	for i, e := range group {
		counters := kindCounters(e.f.Kind, e.f.RuleFound, e.f.Empty)
		page := cluster.ListPage{URL: e.f.Page}
		items := r.splitLinks(page, e.links, &next)
		c, s, _, err := r.candidates(ctx, table, round, page.URL, items, counters)
		if err != nil {
			settle(err)
			return
		}
		if !admitted[i] && !inGroup[members[i]] {
			inGroup[members[i]] = true
			cands, slaves, once = append(cands, c...), append(slaves, s...), append(once, members[i])
		}
		commits[i] = foundCommit{entry: e.d.Entry, counters: counters}
	}
	if err := r.frontier.queueNext(ctx, round, next); err != nil {
		settle(err)
		return
	}
	if len(next) > 0 {
		r.nudge()
	}
	if len(cands) > 0 {
		applied, err := r.admitOnce(ctx, round, once, cands, slaves)
		if err != nil {
			settle(err)
			return
		}
		if applied {
			for _, e := range group {
				r.settleFound(ctx, e.d, r.routeFound(ctx, round, e.d))
			}
			return
		}
	}
	settle(r.frontier.commitFoundBatch(ctx, commits))
}

// anys converts strings to the arguments of a Redis command.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
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

// settleFound notes why a Found entry was not committed; the next
// releaseOrphanFound puts it back (or reclaimFound, once its lease lapsed).
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
		r.warn(ctx, "reclaim found links", zap.Error(err))
	} else if n > 0 {
		r.log.Info("found links put back after lease", zap.Int("entries", n))
	}
}

// dropFound deletes the links slaves found that no master will route any
// more: the job was cancelled, and links not routed were never
// discovered, so no counter misses them.
func (r *jobRunner) dropFound(ctx context.Context) {
	if err := r.m.deps.Redis.Del(ctx, r.keys.Found(), r.keys.FoundActive(), r.keys.FoundAttempts()).Err(); err != nil {
		r.warn(ctx, "drop the found links of a cancelled job", zap.Error(err))
	}
}
