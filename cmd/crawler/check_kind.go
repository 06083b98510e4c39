package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
)

// checkWalkPages is how many pages crawler check reads from the seeds,
// at most, to find the rule that leads to a page whose kind neither its
// URL nor the seeds tell.
const checkWalkPages = 50

// errKindUnknown is what pageKind returns when neither --kind, the seeds
// nor an allow pattern tell the page's kind.
var errKindUnknown = errors.New("cannot tell the page's kind")

// pageKind decides the page's kind without fetching anything: the one
// given, the seed's kind, or the one kind that the link rules whose allow
// matches the URL lead to. Otherwise it returns errKindUnknown.
func pageKind(spec *jobspec.Job, pageURL, given string) (kind, reason string, err error) {
	kinds := spec.PageKinds()
	names := sortedKinds(kinds)
	if given != "" {
		if _, ok := kinds[given]; !ok {
			return "", "", fmt.Errorf("--kind: %q is not a kind of the job (kinds: %s)", given, strings.Join(names, ", "))
		}
		return given, "--kind", nil
	}
	target, err := canon.URL(pageURL)
	if err != nil {
		return "", "", fmt.Errorf("--url: %w", err)
	}
	for _, s := range spec.Seeds {
		if c, err := canon.URL(s); err == nil && c == target {
			return spec.SeedKind(s), "the seed's kind", nil
		}
	}
	if k, rule := allowedKind(kinds, names, pageURL); k != "" {
		return k, fmt.Sprintf("%s leads to it: its allow pattern matches the URL", rule), nil
	}
	return "", "", fmt.Errorf("--kind: %w (kinds: %s); give --kind", errKindUnknown, strings.Join(names, ", "))
}

// allowedKind is the one kind that the link rules with an allow pattern
// matching u lead to, and the first such rule (kinds.list.links[2]), or
// "".
func allowedKind(kinds map[string]jobspec.PageKind, names []string, u string) (kind, rule string) {
	for _, n := range names {
		for i, l := range kinds[n].Links {
			if l.Allow == "" {
				continue
			}
			re, err := regexp.Compile(l.Allow)
			if err != nil || !re.MatchString(u) || (l.Deny != "" && regexp.MustCompile(l.Deny).MatchString(u)) {
				continue
			}
			if kind != "" && kind != l.Kind {
				return "", ""
			}
			if kind == "" {
				kind, rule = l.Kind, fmt.Sprintf("kinds.%s.links[%d]", n, i)
			}
		}
	}
	return kind, rule
}

// walkStep is one page of the walk from the seeds.
type walkStep struct {
	url, kind string
	depth     int
}

// walkKind looks for the page among the links the job's rules find from
// its seeds, breadth-first as a crawl walks them (within allowed_domains
// and max_depth), reading at most checkWalkPages pages: the page's kind is
// the kind of the first rule that finds it.
func walkKind(ctx context.Context, spec *jobspec.Job, rules *extract.Rules, pageURL string) (kind, reason string, err error) {
	target, err := canon.URL(pageURL)
	if err != nil {
		return "", "", fmt.Errorf("--url: %w", err)
	}
	var queue []walkStep
	seen := map[string]bool{}
	for _, s := range spec.Seeds {
		if c, err := canon.URL(s); err == nil && !seen[c] {
			seen[c] = true
			queue = append(queue, walkStep{url: c, kind: spec.SeedKind(s)})
		}
	}
	read := 0
	for ; len(queue) > 0 && read < checkWalkPages; queue = queue[1:] {
		step := queue[0]
		links, err := walkPage(ctx, spec, rules, step)
		if err != nil {
			continue // a page of the walk that fails is a page a crawl fails too
		}
		read++
		for _, l := range links {
			if l.URL == target {
				return l.Kind, fmt.Sprintf("kinds.%s.links[%d] leads to it from %s", step.kind, l.Rule, step.url), nil
			}
			if !seen[l.URL] && walkable(spec, l.URL, step.depth+1) {
				seen[l.URL] = true
				queue = append(queue, walkStep{url: l.URL, kind: l.Kind, depth: step.depth + 1})
			}
		}
	}
	names := rules.Names()
	return "", "", fmt.Errorf("--kind: %w: it is not a seed, no allow pattern matches it, and no rule leads to it from the %d page(s) read from the seeds (kinds: %s); give --kind",
		errKindUnknown, read, strings.Join(names, ", "))
}

// walkPage fetches one page of the walk and returns the links its kind's
// rules find, list kinds' pages first so that the walk reaches the lists
// before the items.
func walkPage(ctx context.Context, spec *jobspec.Job, rules *extract.Rules, step walkStep) ([]extract.Link, error) {
	kind := rules.Kind(step.kind)
	if kind == nil {
		return nil, fmt.Errorf("no kind %s", step.kind)
	}
	page, err := checkFetch(ctx, spec, step.url, kind.JSON)
	if err != nil {
		return nil, err
	}
	res, err := kind.Extract(ctx, page.URL, page.Body)
	if err != nil {
		return nil, err
	}
	links := slices.Clone(res.Links)
	slices.SortStableFunc(links, func(a, b extract.Link) int {
		return boolOrder(rules.Kind(a.Kind).Item) - boolOrder(rules.Kind(b.Kind).Item)
	})
	return links, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// walkable reports whether a crawl would follow the link at depth.
func walkable(spec *jobspec.Job, link string, depth int) bool {
	if spec.MaxDepth > 0 && depth > spec.MaxDepth {
		return false
	}
	u, err := url.Parse(link)
	return err == nil && spec.AllowsHost(u.Hostname())
}
