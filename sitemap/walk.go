package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/robots"
)

// Fetch gets one URL's body: a sitemap, or a robots.txt. The master
// passes its downloader, so sitemaps obey robots.txt, allowed_domains,
// the host's budget and the size limits like any page; a body may be
// gzipped. An error means the URL could not be had, but for ErrCut.
type Fetch func(ctx context.Context, url string) ([]byte, error)

// ErrCut is what a Fetch returns, with the body, when the body is the
// beginning of a longer one (the rest is past the size limit): the
// sitemap is read as far as it goes, and counted truncated.
var ErrCut = errors.New("sitemap cut at the size limit")

// Defaults of a Walker.
const (
	DefaultMaxDepth    = 3 // an index of indexes of sitemaps
	DefaultMaxSitemaps = 1_000
)

// Walker walks one sitemaps entry of a job: the sitemap, or the sitemaps
// of an index, down to their pages.
type Walker struct {
	// Fetch gets each sitemap.
	Fetch Fetch
	// Allow and Deny filter page URLs (never the sitemaps an index
	// lists); nil admits every page.
	Allow, Deny *regexp.Regexp
	// MaxDepth bounds how deep indexes are followed: 1 reads the sitemap
	// given alone. 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxSitemaps bounds how many sitemaps one Walk fetches. 0 means
	// DefaultMaxSitemaps.
	MaxSitemaps int
}

// NewWalker returns the walker of a job's sitemaps entry.
func NewWalker(rule jobspec.SitemapRule, fetch Fetch) (*Walker, error) {
	w := &Walker{Fetch: fetch}
	var err error
	if rule.Allow != "" {
		if w.Allow, err = regexp.Compile(rule.Allow); err != nil {
			return nil, fmt.Errorf("sitemaps: allow: %w", err)
		}
	}
	if rule.Deny != "" {
		if w.Deny, err = regexp.Compile(rule.Deny); err != nil {
			return nil, fmt.Errorf("sitemaps: deny: %w", err)
		}
	}
	return w, nil
}

// Page is one page URL a sitemap lists.
type Page struct {
	// URL is the page's absolute URL, as the sitemap gives it.
	URL string
	// LastMod is when it last changed, zero if unknown.
	LastMod string
	// Sitemap is the sitemap that lists it.
	Sitemap string
}

// Stats counts what a walk read.
type Stats struct {
	// Sitemaps fetched and parsed; Failed could not be fetched or were not
	// sitemaps (Errors says why, a few of them).
	Sitemaps, Failed int
	// Pages given to the callback; Filtered left out by Allow or Deny;
	// Invalid not http(s) URLs.
	Pages, Filtered, Invalid int
	// Truncated sitemaps held more than MaxURLs entries or MaxBytes bytes,
	// or were cut at the fetch's size limit (ErrCut), and were read as far
	// as that; TruncatedURLs names the first few. Skipped sitemaps were
	// beyond MaxDepth or MaxSitemaps.
	Truncated, Skipped int
	TruncatedURLs      []string
	// Errors are the first few failures, for the job's warnings.
	Errors []string
}

// maxErrors is how many failures Stats keeps.
const maxErrors = 5

func (s *Stats) truncated(sm string) {
	s.Truncated++
	if len(s.TruncatedURLs) < maxErrors {
		s.TruncatedURLs = append(s.TruncatedURLs, sm)
	}
}

func (s *Stats) fail(err error) {
	s.Failed++
	if len(s.Errors) < maxErrors {
		s.Errors = append(s.Errors, err.Error())
	}
}

// Walk fetches the sitemap at root, follows a sitemap index to its
// sitemaps (each once, breadth-first, within MaxDepth and MaxSitemaps),
// and calls page for every page URL the filters admit. A sitemap that
// cannot be fetched or read is counted and skipped; only the context, or
// an error from page, stops the walk.
func (w *Walker) Walk(ctx context.Context, root string, page func(Page) error) (Stats, error) {
	var st Stats
	maxDepth, maxSitemaps := w.MaxDepth, w.MaxSitemaps
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if maxSitemaps <= 0 {
		maxSitemaps = DefaultMaxSitemaps
	}
	seen := map[string]bool{root: true}
	level := []string{root}
	for depth := 1; len(level) > 0; depth++ {
		var next []string
		for _, sm := range level {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if depth > maxDepth || st.Sitemaps+st.Failed >= maxSitemaps {
				st.Skipped++
				continue
			}
			children, err := w.read(ctx, sm, &st, page)
			if err != nil {
				return st, err
			}
			for _, c := range children {
				if !seen[c] {
					seen[c] = true
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return st, nil
}

// read fetches and parses one sitemap, gives its pages to page, and
// returns the sitemaps it lists if it is an index.
func (w *Walker) read(ctx context.Context, sm string, st *Stats, page func(Page) error) ([]string, error) {
	body, err := w.Fetch(ctx, sm)
	cut := errors.Is(err, ErrCut) && len(body) > 0
	if cut {
		err = nil
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st.fail(fmt.Errorf("%s: %w", sm, err))
		return nil, nil
	}
	f, err := parse(ctx, body, limits{urls: MaxURLs, bytes: MaxBytes, cut: cut})
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		st.fail(fmt.Errorf("%s: %w", sm, err))
		return nil, nil
	}
	st.Sitemaps++
	if f.Truncated {
		st.truncated(sm)
	}
	var children []string
	for _, e := range f.Entries {
		loc, ok := resolve(sm, e.Loc)
		if !ok {
			st.Invalid++
			continue
		}
		if f.Index {
			children = append(children, loc)
			continue
		}
		if !w.admits(loc) {
			st.Filtered++
			continue
		}
		st.Pages++
		p := Page{URL: loc, Sitemap: sm}
		if !e.LastMod.IsZero() {
			p.LastMod = e.LastMod.Format("2006-01-02T15:04:05Z07:00")
		}
		if err := page(p); err != nil {
			return nil, err
		}
	}
	return children, nil
}

func (w *Walker) admits(u string) bool {
	return (w.Allow == nil || w.Allow.MatchString(u)) && (w.Deny == nil || !w.Deny.MatchString(u))
}

// resolve makes a sitemap's loc absolute against the sitemap's URL; only
// http(s) URLs are kept.
func resolve(base, loc string) (string, bool) {
	b, err := url.Parse(base)
	if err != nil {
		return "", false
	}
	u, err := b.Parse(loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return u.String(), true
}

// ErrNoRobotsSitemaps is returned when no seed host's robots.txt names a
// sitemap.
var ErrNoRobotsSitemaps = errors.New("no Sitemap: line in the robots.txt of the seeds' hosts")

// RobotsSitemaps returns the sitemaps the robots.txt of each seed's host
// names (Sitemap: lines), each once, in seed order: what a sitemaps entry
// with url: robots walks. A robots.txt that cannot be fetched names none.
func RobotsSitemaps(ctx context.Context, fetch Fetch, seeds []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			continue
		}
		origin := strings.ToLower(u.Scheme + "://" + u.Host)
		if seen[origin] {
			continue
		}
		seen[origin] = true
		body, err := fetch(ctx, origin+"/robots.txt")
		if err != nil && !errors.Is(err, ErrCut) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		for _, sm := range robots.Sitemaps(body) {
			if abs, ok := resolve(origin+"/robots.txt", sm); ok && !seen[abs] {
				seen[abs] = true
				out = append(out, abs)
			}
		}
	}
	if len(out) == 0 {
		return nil, ErrNoRobotsSitemaps
	}
	return out, nil
}

// Roots returns the sitemaps a sitemaps entry starts from: its URL, or
// for url: robots the Sitemap: lines of the seeds' hosts.
func Roots(ctx context.Context, rule jobspec.SitemapRule, fetch Fetch, seeds []string) ([]string, error) {
	if rule.URL != jobspec.SitemapsFromRobots {
		return []string{rule.URL}, nil
	}
	return RobotsSitemaps(ctx, fetch, seeds)
}
