package downloader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/ctxtime"
)

// Backoff is the crawl's one retry policy: how long the tries'th failed
// attempt at a page waits before the next one. It is exponential from
// RetryBase, with jitter, capped at RetryMax, or the site's Retry-After
// (fe's, when fe is not nil) when that is longer.
func (o Options) Backoff(tries int, fe *fetch.Error) time.Duration {
	wait := o.RetryBase << min(tries-1, 20)
	wait = min(wait, o.RetryMax)
	wait = wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
	if fe != nil && fe.RetryAfter > wait {
		wait = fe.RetryAfter
	}
	return wait
}

// FetchPage fetches one page outside a crawl (crawler check) as a crawl
// tries it: a transient failure is tried again, up to maxRetries times,
// each after opts.Backoff. It returns the page, or the last try's
// *fetch.Error; Tries says how many tries it took. When ctx ends during
// a wait, the error wraps both the last try's error and ctx's.
func FetchPage(ctx context.Context, f *fetch.Fetcher, req fetch.Request, maxRetries int, opts Options) (*fetch.Page, error) {
	return fetchPage(ctx, f, req, maxRetries, opts, ctxtime.Sleep)
}

// fetchPage is FetchPage waiting with sleep; tests watch the waits.
func fetchPage(ctx context.Context, f *fetch.Fetcher, req fetch.Request, maxRetries int, opts Options,
	sleep func(context.Context, time.Duration) error) (*fetch.Page, error) {
	for tries := 1; ; tries++ {
		page, err := f.Do(ctx, req)
		var fe *fetch.Error
		if err == nil {
			page.Tries = tries
			return page, nil
		}
		if !errors.As(err, &fe) {
			return nil, err
		}
		fe.Tries = tries
		if !fe.Transient || tries > maxRetries {
			return nil, err
		}
		if cerr := sleep(ctx, opts.Backoff(tries, fe)); cerr != nil {
			return nil, fmt.Errorf("%w; waiting to try again: %w", err, cerr)
		}
	}
}
