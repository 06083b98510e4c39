package slave

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// visit is what a task's re-crawl knows: what the store held of its page
// when the task was taken, and what the fetch found.
type visit struct {
	looked      bool          // prev is what the store held (nil: nothing)
	prev        *store.Stored // the stored state of the page
	notModified bool          // the site answered 304
	change      store.Change  // what recording the visit found
	// notDue is true when an adaptive re-crawl does not check the page
	// this round: its next check is later (jobspec.Recrawl.Due).
	notDue bool
}

// lookUp reads what the store holds of a job's batch of tasks, in one
// call, before they are fetched, so that each is fetched with its
// validators. A first round has nothing stored and is not looked up (a
// page stored after all is found when its item is written). If the store
// cannot answer, the pages are fetched in full.
func (s *Slave) lookUp(ctx context.Context, j *job, works []*work) {
	found, ok := s.readStored(ctx, j, works, "read validators; fetching the pages in full",
		func(w *work) bool { return w.task.Round > 1 })
	if !ok {
		return
	}
	now := time.Now()
	for _, f := range found {
		f.w.visit.looked = true
		f.w.visit.prev = f.stored
		if r := j.spec.Recrawl; r != nil && f.stored != nil {
			f.w.visit.notDue = !r.Due(f.stored.NextCheckAt, now)
		}
	}
}

// settleNotDue acknowledges a task whose page an adaptive re-crawl does
// not check this round, unfetched: counted skipped, as skipped_not_due,
// over the job and in its round. Nothing is written to the store.
func (s *Slave) settleNotDue(w *work) {
	s.acks.add(w.job, w.job.kindCounts(w.task, ledger.Outcome{Task: w.raw, FP: w.task.FP, Retried: w.task.Retry,
		Skipped: cluster.StatSkippedNotDue, Counts: []string{cluster.RoundStat(cluster.StatSkippedNotDue, w.task.Round)}}))
}

// schedule is what learns the page's next check when its visit is
// recorded: the job's adaptive re-crawl, or none.
func (w *work) schedule() store.Scheduler {
	if r := w.job.spec.Recrawl; r != nil {
		return r
	}
	return nil
}

// storedPage is what the store holds of a task's page (nil: nothing).
type storedPage struct {
	w      *work
	stored *store.Stored
}

// readStored reads, in one call to the store, what is stored of the
// pages of the decodable works that pick chooses. It reports false, and
// reads nothing, when pick chooses none; false too, logging failed, when
// the store cannot answer.
func (s *Slave) readStored(ctx context.Context, j *job, works []*work, failed string,
	pick func(*work) bool) ([]storedPage, bool) {
	var ids []string
	var found []storedPage
	for _, w := range works {
		if w.undecodable != nil || !pick(w) {
			continue
		}
		ids = append(ids, store.ItemID(w.task.Job, w.task.FP))
		found = append(found, storedPage{w: w})
	}
	if len(ids) == 0 {
		return nil, false
	}
	prevs, err := s.deps.Store.Validators(ctx, ids)
	if err != nil {
		s.log.Warn(failed, zap.String("job", j.name), zap.Error(err))
		return nil, false
	}
	for i := range found {
		if p, ok := prevs[ids[i]]; ok {
			found[i].stored = &p
		}
	}
	return found, true
}

// validators are what the task's fetch sends: the stored ones, unless the
// job says conditional: false.
func (w *work) validators() fetch.Validators {
	if w.visit.prev == nil || !w.job.spec.SendsValidators() {
		return fetch.Validators{}
	}
	return fetch.Validators{ETag: w.visit.prev.ETag, LastModified: w.visit.prev.LastModified}
}

// notModified settles a page the site answered 304 for: it goes to the
// committer with no fields to extract. It reports whether the page was one.
func (s *Slave) notModified(w *work, res downloader.Result) bool {
	if !res.Page.NotModified {
		return false
	}
	v := res.Page.Validators
	res.Page.Release()
	t := w.task
	w.visit.notModified = true
	s.commits.add(w, store.Item{ID: store.ItemID(t.Job, t.FP), URL: t.URL, Job: t.Job, Fingerprint: t.FP,
		Round: t.Round, Status: res.Page.Status, ETag: v.ETag, LastModified: v.LastModified, Slave: s.opts.ID},
		res.Tries-1, "") // no body: the links it held were followed when it was fetched in full
	return true
}

// save records a batch of items as visits, in one call to the store, and
// notes on each what it found.
func (c *committer) save(ctx context.Context, batch []pendingItem) []error {
	visits := make([]store.Visit, len(batch))
	for i, p := range batch {
		v := p.w.visit
		visits[i] = store.Visit{Item: p.item, NotModified: v.notModified, Looked: v.looked, Prev: v.prev, Schedule: p.w.schedule()}
	}
	errs := make([]error, len(batch))
	rec := c.s.deps.Metrics.Node(metrics.RoleSlave, c.s.opts.ID).Recrawl()
	for i, r := range c.s.deps.Store.SaveVisits(ctx, time.Now().UTC(), visits) {
		errs[i] = r.Err
		batch[i].w.visit.change = r.Change
		if r.Err == nil {
			batch[i].item.Version = r.Version // for the sinks
			rec.Visited(batch[i].w.job.name, string(r.Change))
		}
	}
	return errs
}

// counts are the stats fields the task's acknowledgement adds one to:
// rendered when the page was read from its rendered DOM, and what its
// visit found, over the job and in its round.
func (w *work) counts() []string {
	var counts []string
	if w.rendered {
		counts = append(counts, cluster.StatRendered)
	}
	if w.bytes > 0 {
		counts = append(counts, ledger.Add(cluster.StatBytes, w.bytes), ledger.Add(cluster.RoundStat(cluster.StatBytes, w.task.Round), w.bytes))
	}
	if w.visit.change == "" {
		return counts
	}
	c := string(w.visit.change)
	return append(counts, c, cluster.RoundStat(c, w.task.Round))
}
