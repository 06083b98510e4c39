package master

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/store"
)

// idleWait is how long a list worker waits when the frontier is empty.
const idleWait = 200 * time.Millisecond

// listWorker takes list pages from the frontier and processes them until
// ctx ends or another master takes the job over. It takes nothing while no
// slave is live, so nothing is routed to nobody.
func (r *jobRunner) listWorker(ctx context.Context, round int64) error {
	for ctx.Err() == nil {
		if r.m.liveRoutes() == nil {
			sleep(ctx, idleWait)
			continue
		}
		pages, err := r.lists.Take(ctx, 1, r.m.opts.ListLease)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("take list page", zap.Error(err))
			}
			sleep(ctx, r.m.opts.Tick)
			continue
		}
		if len(pages) == 0 {
			sleep(ctx, idleWait)
			continue
		}
		done := r.working(pages[0])
		err = r.processList(ctx, round, pages[0])
		done()
		if errors.Is(err, errFenced) {
			return err
		}
		if err != nil && ctx.Err() == nil {
			// The page stays in progress, an orphan: the next reclaim puts it back.
			r.log.Warn("list page not committed; it will be fetched again", zap.String("page", pages[0]), zap.Error(err))
		}
	}
	return nil
}

// processList fetches one list page and commits what it links to.
func (r *jobRunner) processList(ctx context.Context, round int64, member string) error {
	page, err := cluster.DecodeListPage(member)
	if err != nil {
		r.log.Error("drop undecodable list page", zap.String("page", member), zap.Error(err))
		return r.frontier.commit(ctx, round, member, nil, nil)
	}
	res, err := r.m.fetcher.Fetch(ctx, fetch.Request{URL: page.URL, AllowPrivate: r.spec.AllowPrivateNetworks, MaxRetries: r.spec.MaxRetries})
	if err != nil {
		return r.failList(ctx, round, member, page, err)
	}
	doc, err := extract.Parse(res.URL, res.Body)
	if err != nil {
		return r.failList(ctx, round, member, page, err)
	}
	counters, err := r.admitDetails(ctx, round, page, doc)
	if err != nil {
		return err
	}
	counters[cluster.StatListPages] = 1
	if res.Tries > 1 {
		counters[cluster.StatRetries] = int64(res.Tries - 1)
	}
	return r.frontier.commit(ctx, round, member, counters, r.nextPages(page, doc))
}

// admitDetails routes the page's detail links: one atomic dupefilter call
// pushes the new ones onto their slaves' queues, once per page per round.
// It returns the counters the frontier commit adds (offsite and invalid
// links, which the dupefilter never sees).
func (r *jobRunner) admitDetails(ctx context.Context, round int64, page cluster.ListPage, doc *extract.Document) (map[string]int64, error) {
	table := r.m.liveRoutes()
	if table == nil {
		return nil, errors.New("no live slave to route to")
	}
	counters := map[string]int64{}
	var cands []dedup.Candidate
	for _, ref := range doc.Links(r.spec.DetailLink) {
		canon, err := dedup.CanonicalizeRef(doc.Base(), ref)
		if err != nil {
			counters[cluster.StatInvalidLinks]++
			continue
		}
		if !r.allowed(canon) {
			counters[cluster.StatOffsite]++
			continue
		}
		c, err := r.candidate(table, round, page, canon)
		if err != nil {
			return nil, err
		}
		cands = append(cands, c)
	}
	pageFP := dedup.RequestFingerprint("GET", page.URL, nil) // page.URL is canonical
	_, err := r.filter.Admit(ctx, dedup.Batch{
		Candidates: cands,
		Stats:      r.keys.Stats(), NewField: cluster.StatRouted, DupField: cluster.StatDuplicates,
		OnceKey: r.keys.Committed(round), OnceMember: pageFP.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("admit %d detail links: %w", len(cands), err)
	}
	return counters, nil
}

// candidate builds the task for one detail URL, routed with the table.
func (r *jobRunner) candidate(table *assign.Snapshot, round int64, page cluster.ListPage, canon string) (dedup.Candidate, error) {
	fp := dedup.RequestFingerprint("GET", canon, nil)
	slave, err := table.Route(fp[:])
	if err != nil {
		return dedup.Candidate{}, fmt.Errorf("route %s: %w", canon, err)
	}
	task := cluster.Task{URL: canon, FP: fp.String(), Job: r.name, Referer: page.URL, Round: round}
	return dedup.Candidate{
		FP: fp, Queue: r.keys.Queue(slave), Payload: task.Encode(),
		Counter: cluster.SlaveStat(cluster.StatRouted, slave),
	}, nil
}

// nextPages returns the page's next_link pages within max_depth.
func (r *jobRunner) nextPages(page cluster.ListPage, doc *extract.Document) []pageRef {
	depth := page.Depth + 1
	if r.spec.NextLink == nil || (r.spec.MaxDepth > 0 && depth > r.spec.MaxDepth) {
		return nil
	}
	var next []pageRef
	for _, ref := range doc.Links(r.spec.NextLink) {
		canon, err := dedup.CanonicalizeRef(doc.Base(), ref)
		if err != nil || !r.allowed(canon) {
			continue
		}
		fp := dedup.RequestFingerprint("GET", canon, nil)
		next = append(next, pageRef{fp: fp.String(), page: cluster.ListPage{URL: canon, Depth: depth}})
	}
	return next
}

// failList records a list page that could not be fetched and takes it off
// the frontier.
func (r *jobRunner) failList(ctx context.Context, round int64, member string, page cluster.ListPage, cause error) error {
	f := store.Failure{
		URL: page.URL, Job: r.name, Kind: store.KindList, Reason: cause.Error(),
		Transient: fetch.IsTransient(cause), FailedAt: time.Now().UTC(), Round: round,
		Attempts: r.spec.MaxRetries + 1,
	}
	var fe *fetch.Error
	if errors.As(cause, &fe) {
		f.Status = fe.Status
		if !fe.Transient {
			f.Attempts = 1
		}
	}
	fp := dedup.RequestFingerprint("GET", page.URL, nil)
	f.ID = store.ItemID(r.name, fp.String())
	if err := r.m.deps.Failures.SaveFailure(ctx, f); err != nil {
		return fmt.Errorf("record failed list page: %w", err)
	}
	r.log.Warn("list page failed", zap.String("url", page.URL), zap.Error(cause))
	return r.frontier.commit(ctx, round, member, map[string]int64{cluster.StatListFailed: 1}, nil)
}

// allowed reports whether the URL's host is one of the allowed domains or a
// subdomain of one.
func (r *jobRunner) allowed(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, d := range r.spec.AllowedDomains {
		d = strings.ToLower(d)
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}
