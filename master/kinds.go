package master

import (
	"context"
	"fmt"
	"strings"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
)

// itemKind reports whether kind is one of the job's item kinds, whose
// pages go to the slaves.
func (r *jobRunner) itemKind(kind string) bool {
	k := r.rules.Kind(kind)
	return k != nil && k.Item
}

// pageOnce is the once-guard of the item links found on the page at url
// (canonical): the dupefilter admits them once per round.
func pageOnce(url string) string {
	return canon.RequestFingerprint("GET", url, nil).String()
}

// route sends the links found on page where their kinds say: pages of a
// list kind to the frontier (one level deeper, within max_depth and the
// allowed domains), pages of an item kind through the dupefilter to the
// slaves, once per once-guard and round. counters gains what the
// dupefilter does not count (offsite links, robots.txt).
func (r *jobRunner) route(ctx context.Context, round int64, page cluster.ListPage, once string, links []extract.Link, counters map[string]int64) error {
	var next []pageRef
	items := r.splitLinks(page, links, &next)
	if err := r.frontier.queueNext(ctx, round, next); err != nil {
		return err
	}
	if len(next) > 0 {
		r.nudge()
	}
	return r.admitLinks(ctx, round, page.URL, once, items, counters)
}

// splitLinks returns the links found on page that lead to pages of an item
// kind, and appends those of a list kind to next, one level deeper
// (within max_depth and the allowed domains).
func (r *jobRunner) splitLinks(page cluster.ListPage, links []extract.Link, next *[]pageRef) []extract.Link {
	var items []extract.Link
	depth := page.Depth + 1
	for _, l := range links {
		switch {
		case r.itemKind(l.Kind):
			items = append(items, l)
		case r.spec.MaxDepth > 0 && depth > r.spec.MaxDepth, !r.allowed(l.URL):
		default:
			p := cluster.ListPage{URL: l.URL, Depth: depth}
			if l.Kind != jobspec.KindStart {
				p.Kind = l.Kind
			}
			*next = append(*next, pageRef{fp: pageOnce(l.URL), page: p})
		}
	}
	return items
}

// routeEntry settles a frontier entry that is not fetched as a list page:
// a page of an item kind (a seed of that kind) is routed to its slave; a
// sitemaps entry is walked and its pages routed to the entry's kind.
func (r *jobRunner) routeEntry(ctx context.Context, round int64, member string, page cluster.ListPage) error {
	counters := map[string]int64{}
	var links []extract.Link
	if page.Sitemap > 0 {
		var err error
		if links, err = r.walkSitemaps(ctx, page, counters); err != nil {
			return err
		}
	} else {
		kind := page.PageKind()
		links = []extract.Link{{URL: page.URL, Kind: kind, Priority: r.kindPriority(kind)}}
	}
	// A sitemap's pages are found one level below its seeds, as a seed's
	// links are.
	if err := r.route(ctx, round, cluster.ListPage{URL: page.URL}, entryOnce(member), links, counters); err != nil {
		return err
	}
	return r.frontier.commit(ctx, round, member, counters, nil)
}

// entryOnce is the once-guard of a frontier entry's routed links.
func entryOnce(member string) string {
	return "entry:" + canon.RequestFingerprint("GET", "entry:"+member, nil).String()
}

// kindCounters are the stats a page of kind adds for the job's warnings:
// the page, the links each rule selected, the fields that selected
// nothing.
func kindCounters(kind string, found []int, empty []string) map[string]int64 {
	c := make(map[string]int64, 1+len(found)+len(empty))
	c[cluster.KindPagesStat(kind)] = 1
	for i, n := range found {
		c[cluster.RuleFoundStat(kind, i)] += int64(n)
	}
	for _, f := range empty {
		c[cluster.FieldEmptyStat(kind, f)]++
	}
	return c
}

// foundLinks turns the links of a Found entry into the links route takes,
// dropping any whose kind the job does not have.
func (r *jobRunner) foundLinks(f cluster.FoundLinks) ([]extract.Link, error) {
	links := make([]extract.Link, 0, len(f.Links))
	for _, l := range f.Links {
		if r.rules.Kind(l.Kind) == nil {
			return nil, fmt.Errorf("found links of %s: the job has no page kind %q", f.Page, l.Kind)
		}
		links = append(links, extract.Link{URL: l.URL, Kind: l.Kind, Priority: l.Priority})
	}
	return links, nil
}

// kindPriority is the priority of the pages of kind (a seed's, a
// sitemap's), found by no link rule.
func (r *jobRunner) kindPriority(kind string) int {
	return r.spec.PageKinds()[kind].KindPriority()
}

// itemKinds names the job's item kinds, space-separated, for kinds.lua;
// "*" for a job in the short form, whose list pages are not counted by
// kind.
func itemKinds(spec *jobspec.Job, rules *extract.Rules) string {
	if spec.ShortForm() {
		return "*"
	}
	var names []string
	for _, n := range rules.Names() {
		if rules.Kind(n).Item {
			names = append(names, n)
		}
	}
	return strings.Join(names, " ")
}

// listKindOutcome is the per-kind counter of a list page not fetched:
// skipped when redirected off the allowed domains, else failed.
func listKindOutcome(kind string, k downloader.Kind) string {
	if k == downloader.Offsite {
		return cluster.KindStat(kind, cluster.KindSkipped)
	}
	return cluster.KindStat(kind, cluster.KindFailed)
}
