package client

import (
	"errors"
	"fmt"

	"github.com/crawler-dev/crawler/cluster"
)

// ErrModelNotCrawled is returned for a job whose crawl model the masters
// and slaves of this version do not walk yet: page kinds, seeds of a kind
// or sitemaps. Such a job parses and validates, and crawler check shows
// what it extracts from a page, but submitted it would crawl its seeds
// alone and store nothing.
var ErrModelNotCrawled = errors.New("this version's masters and slaves crawl only the short form " +
	"(next_link, detail_link, fields); page kinds, seeds of a kind and sitemaps are not crawled yet " +
	"(crawler check shows what they extract from a page)")

// checkCrawlable refuses a job whose crawl model the cluster cannot walk
// yet, naming the field.
func checkCrawlable(spec *cluster.JobSpec) error {
	switch {
	case !spec.ShortForm():
		return fmt.Errorf("job: kinds: %w", ErrModelNotCrawled)
	case len(spec.SeedKinds) > 0:
		return fmt.Errorf("job: seeds: %w", ErrModelNotCrawled)
	case len(spec.Sitemaps) > 0:
		return fmt.Errorf("job: sitemaps: %w", ErrModelNotCrawled)
	}
	return nil
}
