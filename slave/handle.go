package slave

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/neardup"
	"github.com/crawler-dev/crawler/store"
)

// work is one task the slave holds: taken from its queue, not yet
// acknowledged.
type work struct {
	job  *job
	raw  string
	task cluster.Task
	// deliveries is how many times the task has been taken, and lastError
	// why its last holder gave up on it.
	deliveries int
	lastError  string
	// undecodable is why raw is not a task (nil: task is it, decoded once
	// when taken).
	undecodable error
	// storedEarlier is true when the task is redelivered and an earlier
	// delivery of its round stored its page (storedearlier.go), and
	// earlierChange what that delivery's visit found.
	storedEarlier bool
	earlierChange store.Change
	// marked is closed once the task's start mark is written; nil until
	// its fetch begins (guarded by the marker's mutex).
	marked chan struct{}
	// visit is what a re-crawl of the page knows (recrawl.go).
	visit visit
	// rendered is true once the page was read from its rendered DOM.
	rendered bool
	// exchange is the page's request and answer as they went over the
	// wire, kept for a sink that archives them; nil otherwise.
	exchange *fetch.Exchange
	// bytes is the size of the page's body, counted against the job's
	// max_bytes.
	bytes int64
}

// handle settles what the downloader made of a task: a fetched page's item
// goes to the committer (near-duplicates, store, then acknowledgement in
// batches); anything else is recorded and acknowledged. A cancelled task
// stays held, to be handed back when the slave stops, unless its job
// stopped: then it goes back now, for the master to drop.
func (s *Slave) handle(ctx context.Context, w *work, res downloader.Result) {
	switch res.Kind {
	case downloader.Cancelled:
		if w.job.stopped.Err() != nil && ctx.Err() == nil {
			s.handBackStopped(ctx, w)
		}
		return
	case downloader.Fetched:
		s.fetchTime.add(res.Latency)
		s.marks.wait(ctx, w)
		if s.notModified(w, res) {
			return
		}
		w.rendered, w.exchange, w.bytes = res.Rendered, res.Page.Exchange, int64(len(res.Page.Body))
		item, found, err := s.measuredExtract(ctx, w, res.Page)
		res.Page.Release()
		if err != nil && ctx.Err() != nil {
			return // stopping mid-extraction: handed back, fetched again
		}
		if err != nil {
			s.extractFailed(ctx, w, err, found, res.Tries)
			return
		}
		s.commits.add(w, item, res.Tries-1, found)
	case downloader.Failed:
		if unrenderable(res.Err) { // not the page's fault: for a slave that can render
			s.withdrawRender(ctx, w.job.name, res.Err)
			s.park(ctx, w)
			return
		}
		s.settle(ctx, w, s.failure(w, res.Err, res.Tries, res.Transient), ledger.Outcome{Failed: true, Retries: max(res.Tries-1, 0)})
	default: // skipped on purpose
		f := s.failure(w, res.Err, res.Tries, false)
		f.Kind = res.Kind.String()
		s.settle(ctx, w, f, ledger.Outcome{Skipped: skipStat(res.Kind), Retries: max(res.Tries-1, 0)})
	}
}

// skipStat is the counter of why a page was skipped.
func skipStat(k downloader.Kind) string {
	switch k {
	case downloader.NotHTML:
		return cluster.StatSkippedNotHTML
	case downloader.Disallowed:
		return cluster.StatSkippedRobots
	}
	return cluster.StatSkippedOffsite
}

// settle records a page that yields no item and acknowledges its task. If
// the record cannot be written, the task is let go (see letGo).
//
// A page an earlier delivery of this round stored (storedEarlier) is
// counted stored, and no record is written: the counters say what the
// store holds, whichever delivery acknowledges the task.
func (s *Slave) settle(ctx context.Context, w *work, f store.Failure, out ledger.Outcome) {
	if w.storedEarlier {
		w.visit.change = w.earlierChange
		s.acks.add(w.job, w.job.kindCounts(w.task, ledger.Outcome{Task: w.raw, FP: w.task.FP, Retried: w.task.Retry,
			Retries: out.Retries, Counts: w.counts()}))
		return
	}
	if err := s.deps.Store.SaveFailure(ctx, f); err != nil {
		s.letGo(ctx, w, fmt.Errorf("store failure of %s: %w", w.task.URL, err))
		return
	}
	if s.deps.Sinks != nil {
		if err := s.deps.Sinks.PutFailure(ctx, f); err != nil {
			s.letGo(ctx, w, fmt.Errorf("send failure of %s to the sinks: %w", w.task.URL, err))
			return
		}
	}
	if out.Failed {
		s.noteFailure(ctx, f)
	}
	out.Task, out.FP, out.Retried = w.raw, w.task.FP, w.task.Retry
	s.acks.add(w.job, w.job.kindCounts(w.task, out))
}

// letGo gives up on finishing a task for a reason that is not the page's
// (Redis or the store is away): nothing is recorded against the page, the
// reason is noted on the task, and it is no longer held, so the next orphan
// sweep hands it back for another delivery.
func (s *Slave) letGo(ctx context.Context, w *work, cause error) {
	if ctx.Err() != nil {
		return // shutting down: handBack returns it uncounted
	}
	s.log.Warn("task not finished; it will be delivered again", zap.String("job", w.job.name),
		zap.Int("deliveries", w.deliveries), zap.Error(cause))
	if _, err := w.job.queue.Note(ctx, w.raw, cause.Error()); err != nil {
		s.log.Warn("note why a task was not finished", zap.Error(err))
	}
	s.held.remove(w.job, w.raw)
}

// handBackStopped returns a task of a stopped job that was never sent
// to the head of its queue, uncounted as a delivery: the master drops it
// as cancelled. If that fails, its lease lapses and the master drops it
// then.
func (s *Slave) handBackStopped(ctx context.Context, w *work) {
	if _, err := w.job.queue.Release(ctx, []string{w.raw}); err != nil {
		s.log.Warn("hand back a task of a stopped job; its lease will lapse", zap.String("job", w.job.name), zap.Error(err))
	}
	s.held.remove(w.job, w.raw)
}

// failure is the record of a page that yields no item.
func (s *Slave) failure(w *work, cause error, tries int, transient bool) store.Failure {
	t := w.task
	f := store.Failure{
		ID: store.ItemID(t.Job, t.FP), URL: t.URL, Job: t.Job, Kind: store.KindDetail, PageKind: t.ItemKind(),
		Reason: cause.Error(), Transient: transient, Attempts: tries,
		FailedAt: time.Now().UTC(), Round: t.Round, Referer: t.Referer,
	}
	var fe *fetch.Error
	if errors.As(cause, &fe) {
		f.Status = fe.Status
	}
	return f
}

// extractItem extracts the fields of the task's kind from the page, and
// the Found entry of the links it holds ("" when the job wants none); an
// error is the page's (it cannot be read, lacks a required field, or its
// extraction passed its work budget) or ctx's (the slave is stopping). A
// page that lacks a required field yields no item but its Found entry.
func (s *Slave) extractItem(ctx context.Context, w *work, page *fetch.Page) (store.Item, string, error) {
	t := w.task
	res, err := w.job.extract(ctx, t.ItemKind(), page)
	if err != nil {
		if res.Result != nil {
			return store.Item{}, w.job.foundEntry(t, res.Result), err
		}
		return store.Item{}, "", err
	}
	if w.rendered {
		w.job.rendered.note(s.log, w.job.name, t.ItemKind(), res.Empty)
	}
	return store.Item{
		ID: store.ItemID(t.Job, t.FP), URL: t.URL, FinalURL: finalURL(t.URL, page.URL), Job: t.Job, Kind: w.job.itemKindName(t), Fields: res.Fields,
		FetchedAt: time.Now().UTC(), Status: page.Status, Fingerprint: t.FP, Round: t.Round,
		Simhash: int64(res.simhash), Referer: t.Referer, Slave: s.opts.ID,
		ETag: page.Validators.ETag, LastModified: page.Validators.LastModified,
	}, w.job.foundEntry(t, res.Result), nil
}

// finalURL is the page's URL after redirects, when it differs.
func finalURL(asked, got string) string {
	if got == asked {
		return ""
	}
	return got
}

// fieldSimhash is the simhash of the extracted text: the fields' strings
// in field-name order, a list's joined by spaces, each field followed by a
// space (what neardup.Simhash gives for that text joined, without joining
// it). text is false when the fields hold no text but white space.
func fieldSimhash(fields map[string]any) (sum uint64, text bool) {
	var small [16]string
	names := small[:0]
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	var h neardup.Hasher
	for _, n := range names {
		switch v := fields[n].(type) {
		case string:
			text = hashText(&h, v) || text
		case []string:
			for i, s := range v {
				if i > 0 {
					h.WriteString(" ")
				}
				text = hashText(&h, s) || text
			}
		}
		h.WriteString(" ")
	}
	return h.Sum64(), text
}

// hashText writes s to h and reports whether it holds more than white
// space.
func hashText(h *neardup.Hasher, s string) bool {
	h.WriteString(s)
	return strings.TrimSpace(s) != ""
}

// settleUnfetchable records a task that is not fetched at all: one nobody
// can decode, or one whose fetch began more than MaxDeliveries times
// without an outcome (it crashes or hangs its fetcher, its store write
// always fails), with the reason its last holder gave up and those
// deliveries as its attempts, so one poison task cannot keep a job
// running. Deliveries whose holder died before the fetch began do not
// count (queue.Leased.MarkStarted).
func (s *Slave) settleUnfetchable(ctx context.Context, w *work, decodeErr error) {
	if decodeErr != nil {
		sum := sha1.Sum([]byte(w.raw))
		w.task = cluster.Task{Job: w.job.name, URL: w.raw, FP: "undecodable-" + hex.EncodeToString(sum[:8])}
		s.settle(ctx, w, s.failure(w, decodeErr, 0, false), ledger.Outcome{Failed: true})
		return
	}
	reason := w.lastError
	if reason == "" {
		reason = "no reason recorded (its holder died or froze while fetching it)"
	}
	began := w.deliveries - 1 // deliveries whose fetch began and ended without an outcome
	cause := fmt.Errorf("dead-lettered after %d deliveries without an outcome; last: %s", began, reason)
	s.settle(ctx, w, s.failure(w, cause, began, false), ledger.Outcome{Failed: true, DeadLetter: true})
}
