package slave

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/queue"
	"github.com/crawler-dev/crawler/store"
)

// process fetches one task's page and stores its item or its failure. It
// returns the outcome to acknowledge, or an error if the task could not be
// finished for a reason that is not the page's (Redis or the store is
// away): then nothing is recorded against the page and it is delivered
// again.
func (s *Slave) process(ctx context.Context, w work) (queue.Outcome, error) {
	task, err := cluster.DecodeTask(w.raw)
	if err != nil {
		// A task nobody can read: record it so the counters still add up.
		return s.fail(ctx, w, cluster.Task{Job: w.job.name, URL: w.raw, FP: "undecodable"}, err, 1)
	}
	spec := w.job.spec
	page, err := s.fetcher.Fetch(ctx, fetch.Request{URL: task.URL, AllowPrivate: spec.AllowPrivateNetworks, MaxRetries: spec.MaxRetries})
	if err != nil {
		if ctx.Err() != nil {
			return queue.Outcome{}, ctx.Err()
		}
		return s.fail(ctx, w, task, err, attempts(err, spec.MaxRetries))
	}
	item, err := s.extractItem(w.job, task, page)
	if err != nil {
		return s.fail(ctx, w, task, err, page.Tries)
	}
	if err := s.markNearDuplicate(ctx, w.job, &item); err != nil {
		return queue.Outcome{}, err
	}
	if err := s.deps.Store.SaveItem(ctx, item); err != nil {
		return queue.Outcome{}, fmt.Errorf("store item %s: %w", task.URL, err)
	}
	if task.Retry {
		if err := s.deps.Store.DeleteFailure(ctx, item.ID); err != nil {
			return queue.Outcome{}, fmt.Errorf("drop failure record of %s: %w", task.URL, err)
		}
	}
	return queue.Outcome{Task: w.raw, NearDuplicate: item.NearDuplicateOf != "", Retries: page.Tries - 1,
		Retried: task.Retry, FP: task.FP}, nil
}

// extractItem extracts the job's fields from the page; an error is the
// page's (it cannot be parsed).
func (s *Slave) extractItem(j *job, task cluster.Task, page *fetch.Page) (store.Item, error) {
	doc, err := extract.Parse(page.URL, page.Body)
	if err != nil {
		return store.Item{}, err
	}
	fields := doc.Fields(j.spec.Fields)
	text := fieldText(fields)
	if text == "" {
		text = doc.Text()
	}
	return store.Item{
		ID: store.ItemID(task.Job, task.FP), URL: task.URL, Job: task.Job, Fields: fields,
		FetchedAt: time.Now().UTC(), Status: page.Status, Fingerprint: task.FP, Round: task.Round,
		Simhash: int64(dedup.Simhash(text)), Referer: task.Referer, Slave: s.opts.ID,
	}, nil
}

// markNearDuplicate looks the item's simhash up in the job's index; an
// error is Redis's, not the page's.
func (s *Slave) markNearDuplicate(ctx context.Context, j *job, it *store.Item) error {
	match, found, err := j.near.FindOrAdd(ctx, it.URL, uint64(it.Simhash))
	if err != nil {
		return fmt.Errorf("near-duplicate check of %s: %w", it.URL, err)
	}
	if found && match != it.URL {
		it.NearDuplicateOf = match
	}
	return nil
}

// fieldText joins the extracted text in field-name order, for the simhash.
func fieldText(fields map[string]any) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		switch v := fields[n].(type) {
		case string:
			b.WriteString(v)
		case []string:
			b.WriteString(strings.Join(v, " "))
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// fail records the page as failed, with the reason.
func (s *Slave) fail(ctx context.Context, w work, task cluster.Task, cause error, tries int) (queue.Outcome, error) {
	f := store.Failure{
		ID: store.ItemID(task.Job, task.FP), URL: task.URL, Job: task.Job, Kind: store.KindDetail,
		Reason: cause.Error(), Transient: fetch.IsTransient(cause), Attempts: tries,
		FailedAt: time.Now().UTC(), Round: task.Round, Referer: task.Referer,
	}
	var fe *fetch.Error
	if errors.As(cause, &fe) {
		f.Status = fe.Status
	}
	if err := s.deps.Store.SaveFailure(ctx, f); err != nil {
		return queue.Outcome{}, fmt.Errorf("store failure of %s: %w", task.URL, err)
	}
	return queue.Outcome{Task: w.raw, Failed: true, Retries: max(tries-1, 0), Retried: task.Retry, FP: task.FP}, nil
}

// attempts is how many requests a failed fetch made: one for a permanent
// error, all of them for a transient one.
func attempts(err error, maxRetries int) int {
	if fetch.IsTransient(err) {
		return maxRetries + 1
	}
	return 1
}
