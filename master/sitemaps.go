package master

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/sitemap"
)

// walkSitemaps walks the job's sitemaps entry the frontier entry names and
// returns its pages, of the entry's kind. Every sitemap (and robots.txt)
// is fetched through the downloader, so it obeys robots.txt, the allowed
// domains, the host's budget and the size limits as any page does. A
// sitemap that cannot be had is counted and logged, not retried: the walk
// goes on with the others.
func (r *jobRunner) walkSitemaps(ctx context.Context, entry cluster.ListPage, counters map[string]int64) ([]extract.Link, error) {
	if entry.Sitemap > len(r.spec.Sitemaps) {
		return nil, fmt.Errorf("sitemaps entry %d: the job has %d", entry.Sitemap, len(r.spec.Sitemaps))
	}
	rule := r.spec.Sitemaps[entry.Sitemap-1]
	walker, err := sitemap.NewWalker(rule, r.fetchBody)
	if err != nil {
		return nil, err
	}
	// for url: robots, the entry is one seed host's (the stored spec
	// holds no seeds)
	roots, err := sitemap.Roots(ctx, rule, r.fetchBody, []string{entry.URL})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.log.Warn("sitemaps not found", zap.String("url", rule.URL), zap.Error(err))
		counters[cluster.StatSitemapsFailed]++
		return nil, nil
	}
	var links []extract.Link
	seen := map[string]bool{}
	for _, root := range roots {
		st, err := walker.Walk(ctx, root, func(p sitemap.Page) error {
			_, u, err := canon.URLFingerprint(p.URL)
			if err != nil {
				counters[cluster.StatInvalidLinks]++
			} else if !seen[u] {
				seen[u] = true
				links = append(links, extract.Link{URL: u, Kind: rule.Kind, Priority: r.kindPriority(rule.Kind)})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		counters[cluster.StatSitemaps] += int64(st.Sitemaps)
		counters[cluster.StatSitemapsFailed] += int64(st.Failed)
		if len(st.Errors) > 0 {
			r.log.Warn("sitemaps not read", zap.String("root", root), zap.Strings("errors", st.Errors))
		}
		if st.Truncated > 0 {
			r.log.Warn("sitemaps truncated: only their first URLs were read", zap.String("root", root),
				zap.Int("truncated", st.Truncated), zap.Strings("sitemaps", st.TruncatedURLs),
				zap.Int("max_urls", sitemap.MaxURLs), zap.Int64("max_bytes", r.m.opts.SitemapMaxBytes))
		}
	}
	counters[cluster.StatSitemapURLs] += int64(len(links))
	return links, nil
}

// fetchBody fetches one sitemap or robots.txt through the downloader, as
// it is (not HTML), up to Options.SitemapMaxBytes as sent: a longer body
// comes cut there, with sitemap.ErrCut.
func (r *jobRunner) fetchBody(ctx context.Context, url string) ([]byte, error) {
	res := r.m.dl.Fetch(ctx, &downloader.Request{URL: url, Job: r.dl, AllowNonHTML: true,
		MaxBodyBytes: r.m.opts.SitemapMaxBytes, TruncateBody: true})
	if res.Kind == downloader.Cancelled && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if res.Kind != downloader.Fetched {
		if res.Err == nil {
			res.Err = errors.New(res.Kind.String())
		}
		err := fmt.Errorf("fetch %s: %s: %w", url, res.Kind, res.Err)
		r.log.Warn("sitemap not fetched", zap.Error(err))
		return nil, err
	}
	// The body is parsed and dropped before the next sitemap is fetched;
	// its charge is given back now rather than the body copied.
	res.Page.Release()
	if res.Page.Truncated {
		return res.Page.Body, fmt.Errorf("%s: %w (%d bytes)", url, sitemap.ErrCut, len(res.Page.Body))
	}
	return res.Page.Body, nil
}
