package master

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/queue"
	"github.com/crawler-dev/crawler/robots"
	"github.com/crawler-dev/crawler/store"
)

// idleWait is how long the feeder waits when the frontier is empty.
const idleWait = 200 * time.Millisecond

// feed takes list pages from the frontier and hands them to the downloader,
// keeping at most ListConcurrency of the job's pages in progress, until
// ctx ends, the job is paused or another master takes the job over. How
// many are fetched at once, and how fast, is up to each host's budget. It
// takes nothing while no slave is live, so nothing is routed to nobody.
func (r *jobRunner) feed(ctx context.Context, round int64) error {
	for ctx.Err() == nil && !r.pausing.Load() {
		if err := r.fenced(); err != nil {
			return err
		}
		room := r.m.opts.ListConcurrency - r.inProgressCount()
		if r.m.liveRoutes() == nil || room <= 0 {
			sleep(ctx, idleWait/4)
			continue
		}
		pages, err := r.lists.Take(ctx, room, r.m.opts.ListLease)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("take list pages", zap.Error(err))
			}
			sleep(ctx, r.m.opts.Tick)
			continue
		}
		for _, d := range pages {
			r.startList(ctx, round, d)
		}
		if len(pages) == 0 {
			r.waitDone(ctx, idleWait)
		}
	}
	return nil
}

// waitDone waits until one of this runner's list pages is done with (it
// may have queued the next pages) or d passes, whichever is first: a BFS
// whose levels are one page wide walks as fast as pages are fetched.
func (r *jobRunner) waitDone(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.pageDone:
	case <-t.C:
	}
}

// startList hands one delivery of a list page to the downloader; one
// delivered MaxDeliveries times without a commit is given up on at once
// and recorded as failed, so one page that always breaks something cannot
// keep a job from finishing.
func (r *jobRunner) startList(ctx context.Context, round int64, d queue.Delivery) {
	done := r.working(d.Entry)
	page, err := cluster.DecodeListPage(d.Entry)
	if err != nil || d.Count > r.m.opts.MaxDeliveries {
		go func() {
			defer done()
			r.settleList(ctx, d, r.unfetchable(ctx, round, d, page, err))
		}()
		return
	}
	if page.Sitemap > 0 || r.itemKind(page.PageKind()) {
		go func() { // nothing to fetch here: routed as it is, or walked
			defer done()
			r.settleList(ctx, d, r.routeEntry(ctx, round, d.Entry, page))
		}()
		return
	}
	kind := r.rules.Kind(page.PageKind())
	req := &downloader.Request{Abandon: r.abandon, URL: page.URL, Job: r.dl, Kind: page.PageKind(),
		AllowNonHTML: kind != nil && kind.JSON}
	go func() {
		defer done()
		res := r.m.dl.Fetch(ctx, req)
		if res.Kind == downloader.Cancelled && r.pausing.Load() && ctx.Err() == nil {
			r.handBackPaused(ctx, d.Entry) // not sent: the pause is not the page's fault
			return
		}
		if res.Kind == downloader.Cancelled {
			return // still in progress: the next orphan sweep puts it back
		}
		r.settleList(ctx, d, r.processList(ctx, round, d.Entry, page, res))
	}()
}

// unfetchable settles a list page that is not fetched: undecodable, or
// delivered too often.
func (r *jobRunner) unfetchable(ctx context.Context, round int64, d queue.Delivery, page cluster.ListPage, decodeErr error) error {
	if decodeErr != nil {
		r.log.Error("drop undecodable list page", zap.String("page", d.Entry), zap.Error(decodeErr))
		return r.frontier.commit(ctx, round, d.Entry, map[string]int64{cluster.StatListFailed: 1}, nil)
	}
	cause := fmt.Errorf("gave up after %d deliveries without a commit (last: %s)", d.Count-1, orNone(d.LastError))
	return r.failList(ctx, round, d.Entry, page, downloader.Result{Kind: downloader.Failed, Err: cause})
}

// settleList notes why a list page could not be committed: it stays in
// progress, an orphan the next reclaim puts back, and its next delivery
// carries the reason.
func (r *jobRunner) settleList(ctx context.Context, d queue.Delivery, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	if errors.Is(err, errFenced) {
		r.lost.Store(true)
		return
	}
	r.log.Warn("list page not committed; it will be fetched again", zap.String("page", d.Entry), zap.Error(err))
	if _, nerr := r.lists.Note(ctx, d.Entry, err.Error()); nerr != nil {
		r.log.Warn("note list page failure", zap.Error(nerr))
	}
}

func orNone(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

// processList commits what a fetched list page links to, or records why it
// could not be fetched.
func (r *jobRunner) processList(ctx context.Context, round int64, member string, page cluster.ListPage, res downloader.Result) error {
	if res.Kind != downloader.Fetched {
		return r.failList(ctx, round, member, page, res)
	}
	found, err := r.extractList(ctx, page, res)
	size := int64(len(res.Page.Body))
	res.Page.Release()
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // stopping: the page stays in progress
	}
	if err != nil {
		return r.failList(ctx, round, member, page, downloader.Result{Kind: downloader.Failed, Err: err, Tries: res.Tries})
	}
	counters := kindCounters(page.PageKind(), found.Found, nil)
	counters[cluster.StatInvalidLinks] += int64(found.Invalid)
	// The next level of the walk goes to the frontier first, so it is
	// fetched while this page's item links are admitted: the walk is the
	// clock of a one-site crawl. A crash before the commit fetches this
	// page again; the frontier and the dupefilter take each link once.
	if err := r.route(ctx, round, page, pageOnce(page.URL), found.Links, counters); err != nil {
		return err
	}
	counters[cluster.StatListPages] = 1
	counters[cluster.StatBytes], counters[cluster.RoundStat(cluster.StatBytes, round)] = size, size
	if res.Rendered {
		counters[cluster.StatRendered] = 1
	}
	if res.Tries > 1 {
		counters[cluster.StatRetries] = int64(res.Tries - 1)
	}
	return r.frontier.commit(ctx, round, member, counters, nil)
}

// extractList runs the rules of the page's kind on it.
func (r *jobRunner) extractList(ctx context.Context, page cluster.ListPage, res downloader.Result) (*extract.Result, error) {
	kind := r.rules.Kind(page.PageKind())
	if kind == nil {
		return nil, fmt.Errorf("the job has no page kind %q", page.PageKind())
	}
	return kind.Extract(ctx, res.Page.URL, res.Page.Body)
}

// admitLinks routes item links: one atomic dupefilter call pushes the new
// ones onto their slaves' queues, once per page (once) per round. It adds
// to counters the offsite links and those robots.txt disallows, which the
// dupefilter never sees.
func (r *jobRunner) admitLinks(ctx context.Context, round int64, referer, once string, links []extract.Link, counters map[string]int64) error {
	table := r.m.liveRoutes()
	if table == nil {
		return errors.New("no live slave to route to")
	}
	cands, slaves, kinds, err := r.candidates(ctx, table, round, referer, links, counters)
	if err != nil {
		return err
	}
	if r.byKind == nil {
		return r.admit(ctx, round, once, "", cands, slaves)
	}
	for _, kind := range r.byKind { // each kind admitted and counted apart, under a once-guard of its own
		var kc []dedup.Candidate
		var ks []int
		for i, c := range cands {
			if kinds[i] == kind {
				kc, ks = append(kc, c), append(ks, slaves[i])
			}
		}
		if len(kc) > 0 {
			if err := r.admit(ctx, round, once+":"+kind, kind, kc, ks); err != nil {
				return err
			}
		}
	}
	return nil
}

// candidates builds the tasks of the item links found on the page at
// referer, each with the slave it is routed to and its kind; links off
// the allowed domains or disallowed by robots.txt are left out and
// counted in counters.
func (r *jobRunner) candidates(ctx context.Context, table *assign.Snapshot, round int64, referer string, links []extract.Link, counters map[string]int64) ([]dedup.Candidate, []int, []string, error) {
	var cands []dedup.Candidate
	var slaves []int // each candidate's slave
	var kinds []string
	for _, l := range links {
		if !r.allowed(l.URL) {
			counters[cluster.StatOffsite]++
			continue
		}
		if ok, err := r.robotsAllow(ctx, l.URL); err != nil {
			return nil, nil, nil, err
		} else if !ok {
			counters[cluster.StatRobots]++
			continue
		}
		c, slave, err := r.candidate(table, round, referer, l)
		if err != nil {
			return nil, nil, nil, err
		}
		cands, slaves, kinds = append(cands, c), append(slaves, slave), append(kinds, l.Kind)
	}
	return cands, slaves, kinds, nil
}

// robotsAllow reports whether robots.txt lets the job fetch the item link
// at rawURL. A link whose host the address guard refuses (a cloud
// metadata address, or a private one without allow_private_networks) is
// no matter of robots.txt: it is routed like any other, and its fetch
// fails at once, recorded as failed with the guard's reason. That link is
// its own failure; the page's other links are admitted all the same.
func (r *jobRunner) robotsAllow(ctx context.Context, rawURL string) (bool, error) {
	ok, err := r.dl.Allowed(ctx, rawURL)
	if errors.Is(err, robots.ErrRefused) {
		return true, nil
	}
	return ok, err
}

// admitChunk is the most detail links one admission script takes: a list
// page of 100,000 links is admitted in a hundred steps, none holding Redis
// long.
const admitChunk = 1000

// admit checks the page's detail links against the dupefilter and routes
// the new ones, a chunk per script call, counting them in the job's
// counters and, when kind is set, in the kind's. Each chunk has a
// once-guard of its own, so a page fetched again after a crash admits no
// chunk twice. The slaves whose queues it started are told so (wakeSlaves).
func (r *jobRunner) admit(ctx context.Context, round int64, pageFP, kind string, cands []dedup.Candidate, slaves []int) error {
	woken := map[int]bool{}
	defer func() { go r.m.wakeSlaves(context.WithoutCancel(ctx), r.name, woken) }() // off the walk's path
	for start, chunk := 0, 0; start < len(cands) || start == 0; start, chunk = start+admitChunk, chunk+1 {
		end := min(start+admitChunk, len(cands))
		once := pageFP
		if chunk > 0 {
			once = pageFP + ":" + strconv.Itoa(chunk)
		}
		b := dedup.Batch{Candidates: cands[start:end], OnceKey: r.keys.Committed(round), OnceMember: once}
		if _, err := r.admitBatch(ctx, b, kind, slaves[start:end], woken); err != nil {
			return err
		}
		if len(cands) == 0 {
			break
		}
	}
	return nil
}

// admitOnce admits the item links of several pages in one script call,
// under the pages' once-guards: it reports true, and changes nothing, if
// any of them was admitted already. At most admitChunk links, of a job
// with one item kind.
func (r *jobRunner) admitOnce(ctx context.Context, round int64, once []string, cands []dedup.Candidate, slaves []int) (bool, error) {
	woken := map[int]bool{}
	defer func() { go r.m.wakeSlaves(context.WithoutCancel(ctx), r.name, woken) }()
	return r.admitBatch(ctx, dedup.Batch{Candidates: cands, OnceKey: r.keys.Committed(round), OnceMembers: once}, "", slaves, woken)
}

// admitBatch checks one batch of detail links (its candidates and
// once-guard set) against the dupefilter, routing the new ones and
// counting them (in kind's counters too, when set); it notes in woken the
// slaves whose queues it started (pushed onto empty: a slave with tasks
// queued takes these with them, unwoken), and reports whether the
// once-guard had been recorded before.
func (r *jobRunner) admitBatch(ctx context.Context, b dedup.Batch, kind string, slaves []int, woken map[int]bool) (bool, error) {
	b.Stats, b.NewField, b.DupField = r.keys.Stats(), cluster.StatRouted, cluster.StatDuplicates
	if bu := r.spec.Budget; bu.Bounded() {
		b.Budget = &dedup.Budget{State: r.keys.State(), Key: r.keys.Budget(), MaxPages: bu.MaxPages,
			MaxPagesPerHost: bu.MaxPagesPerHost, SkipField: cluster.StatSkipped}
	}
	if kind != "" {
		b.NewField += " " + cluster.KindStat(kind, cluster.KindRouted)
		b.DupField += " " + cluster.KindStat(kind, cluster.KindDuplicates)
		if b.Budget != nil {
			b.Budget.SkipField += " " + cluster.KindStat(kind, cluster.KindSkipped)
		}
	}
	res, err := r.filter.Admit(ctx, b)
	if err != nil {
		return false, fmt.Errorf("admit %d detail links: %w", len(b.Candidates), err)
	}
	fresh := 0
	for i, isNew := range res.New {
		if isNew {
			fresh++
			if slaves[i] != queue.RenderWait && slices.Contains(res.Started, b.Candidates[i].Queue) {
				woken[slaves[i]] = true
			}
		}
	}
	r.m.deps.Metrics.Node(metrics.RoleMaster, 0).Dedup().Admitted(r.name, fresh, len(res.New)-fresh)
	return res.AlreadyApplied, nil
}

// candidate builds the task for one item link, routed with the table to
// the slave it returns.
func (r *jobRunner) candidate(table *assign.Snapshot, round int64, referer string, link extract.Link) (dedup.Candidate, int, error) {
	fp := canon.RequestFingerprint("GET", link.URL, nil)
	task := cluster.Task{URL: link.URL, FP: fp.String(), Job: r.name, Referer: referer, Round: round, Priority: link.Priority}
	if link.Kind != jobspec.KindDetail {
		task.Kind = link.Kind // the short form's tasks stay as they were
	}
	key := fp[:]
	if r.byHost {
		key = hostRouteKey(link.URL) // link.URL is canonical: it parses
	}
	slave, err := r.routeKind(table, task.ItemKind(), key)
	if err != nil {
		return dedup.Candidate{}, 0, fmt.Errorf("route %s: %w", link.URL, err)
	}
	seen := r.dedupKey(fp, round)
	if slave == queue.RenderWait { // no slave can render it yet
		return dedup.Candidate{FP: seen, Queue: r.keys.RenderWait(), Payload: task.Encode()}, slave, nil
	}
	return dedup.Candidate{
		FP: seen, Queue: r.keys.Band(slave, task.Priority), Payload: task.Encode(),
		Counter: cluster.SlaveStat(cluster.StatRouted, slave),
	}, slave, nil
}

// failList records a list page that could not be fetched (or was not HTML,
// disallowed by robots.txt, redirected off the allowed domains) and takes
// it off the frontier, counted by listOutcome.
func (r *jobRunner) failList(ctx context.Context, round int64, member string, page cluster.ListPage, res downloader.Result) error {
	f := store.Failure{
		URL: page.URL, Job: r.name, Kind: store.KindList, PageKind: page.PageKind(), Reason: res.Err.Error(),
		Transient: res.Transient, FailedAt: time.Now().UTC(), Round: round, Attempts: res.Tries, Status: res.Status,
	}
	if res.Kind.Skipped() {
		f.Reason = res.Kind.String() + ": " + f.Reason
	}
	if kind := extract.FailureKind(res.Err); kind != "" {
		f.Kind = kind
	}
	f.ID = store.ItemID(r.name, canon.RequestFingerprint("GET", page.URL, nil).String())
	if err := r.m.deps.Failures.SaveFailure(ctx, f); err != nil {
		return fmt.Errorf("record failed list page: %w", err)
	}
	if !res.Kind.Skipped() {
		r.noteFailure(ctx, f)
	}
	r.log.Warn("list page not fetched", zap.String("url", page.URL), zap.String("kind", res.Kind.String()), zap.Error(res.Err))
	counters := listOutcome(res.Kind)
	if !r.spec.ShortForm() {
		counters[listKindOutcome(page.PageKind(), res.Kind)] = 1
	}
	return r.frontier.commit(ctx, round, member, counters, nil)
}

// listOutcome is what a list page that was not fetched adds to the stats.
// One redirected off the allowed domains is counted as skipped_offsite, as
// a detail page is, not as failed; being no detail link, it is not
// discovered, so it adds nothing to skipped and the counters still add up.
// Every other one is list_failed, one disallowed by robots.txt also
// robots_disallowed.
func listOutcome(kind downloader.Kind) map[string]int64 {
	switch kind {
	case downloader.Offsite:
		return map[string]int64{cluster.StatSkippedOffsite: 1}
	case downloader.Disallowed:
		return map[string]int64{cluster.StatListFailed: 1, cluster.StatRobots: 1}
	}
	return map[string]int64{cluster.StatListFailed: 1}
}

// allowed reports whether the URL's host is one of the allowed domains or a
// subdomain of one.
func (r *jobRunner) allowed(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && r.spec.AllowsHost(u.Hostname())
}
