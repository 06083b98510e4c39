package client

import (
	"context"
	"fmt"

	"github.com/crawler-dev/crawler/cluster"
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
	var args []any
	for _, f := range failures {
		fp := f.Fingerprint()
		if f.Kind != store.KindDetail || f.Job != job || fp == "" {
			continue
		}
		task := cluster.Task{URL: f.URL, FP: fp, Job: job, Referer: f.Referer, Round: f.Round, Retry: true}
		args = append(args, fp, task.Encode())
	}
	if len(args) == 0 {
		return 0, nil
	}
	n, err := retryScript.Run(ctx, c.rdb, []string{jk.Retry(), jk.Retrying(), jk.State()}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("retry failed of job %s: %w", job, err)
	}
	return n, nil
}
