package client

import (
	"context"
	"fmt"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/store"
)

// RetryFailed re-enqueues a job's failed detail pages (list pages are
// fetched again by the next round). A page stored this time moves from the
// failed counter to stored, and its failure record is dropped; one that
// fails again stays failed with the new reason. It returns how many pages
// were re-enqueued.
func (c *Client) RetryFailed(ctx context.Context, job string, failures []store.Failure) (int, error) {
	jk := c.keys.Job(job)
	if n, err := c.rdb.Exists(ctx, jk.State()).Result(); err != nil || n == 0 {
		if err != nil {
			return 0, fmt.Errorf("retry failed of job %s: %w", job, err)
		}
		return 0, fmt.Errorf("retry failed of job %s: %w", job, ErrJobNotFound)
	}
	var tasks []cluster.Task
	for _, f := range failures {
		if retryable(job, f) {
			tasks = append(tasks, cluster.Task{URL: f.URL, FP: f.Fingerprint(), Job: job, Referer: f.Referer, Round: f.Round, Retry: true})
		}
	}
	n, err := ledger.New(c.rdb, jk).Retry(ctx, tasks)
	if err != nil {
		return 0, fmt.Errorf("retry failed of job %s: %w", job, err)
	}
	return n, nil
}

// retryable reports whether RetryFailed re-enqueues the failure: a detail
// page of the job that could not be fetched.
func retryable(job string, f store.Failure) bool {
	return f.Kind == store.KindDetail && f.Job == job && f.Fingerprint() != ""
}

// NotRetried counts the failures of job that RetryFailed leaves alone, by
// their kind: list pages (the next round fetches them again), pages
// skipped on purpose (not_html, robots, offsite) and pages that were
// fetched but yield no item (missing_field, extract_limit), which a retry
// would fail the same way.
func NotRetried(job string, failures []store.Failure) map[string]int {
	counts := map[string]int{}
	for _, f := range failures {
		if f.Job == job && !retryable(job, f) {
			counts[f.Kind]++
		}
	}
	return counts
}
