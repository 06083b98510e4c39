package client

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// KindCounts are one page kind's counters. Once the job is finished,
// Discovered = Stored + Failed + Skipped + Duplicates + Cancelled, as for
// the job. A list kind's pages are stored when read (their links routed);
// an item kind's are the job's items. With more than one item kind, each
// item kind's counters are its own, and they add up to the job's.
type KindCounts struct {
	Discovered int64 `json:"discovered"`
	Stored     int64 `json:"stored"`
	Failed     int64 `json:"failed"`
	Skipped    int64 `json:"skipped"`
	Duplicates int64 `json:"duplicates"`
	Cancelled  int64 `json:"cancelled"`
}

// kindStatus gathers the per-kind counters and the warnings of a job
// written with page kinds or in the short form.
func kindStatus(spec *jobspec.Job, stats map[string]string, c Counters) (map[string]KindCounts, []string) {
	n := func(k string) int64 { v, _ := strconv.ParseInt(stats[k], 10, 64); return v }
	kinds := spec.PageKinds()
	if spec.ShortForm() {
		return nil, kindWarnings(kinds, n, shortFormRule(spec))
	}
	var items []string
	out := map[string]KindCounts{}
	for name, k := range kinds {
		if k.Item {
			items = append(items, name)
			continue
		}
		out[name] = KindCounts{
			Discovered: n(cluster.KindStat(name, cluster.KindDiscovered)),
			Stored:     n(cluster.KindPagesStat(name)),
			Failed:     n(cluster.KindStat(name, cluster.KindFailed)),
			Skipped:    n(cluster.KindStat(name, cluster.KindSkipped)),
			Duplicates: n(cluster.KindStat(name, cluster.KindDuplicates)),
			Cancelled:  n(cluster.KindStat(name, cluster.KindCancelled)),
		}
	}
	if len(items) == 1 {
		out[items[0]] = KindCounts{Discovered: c.Discovered, Stored: c.Stored, Failed: c.Failed,
			Skipped: c.Skipped, Duplicates: c.Duplicates, Cancelled: c.Cancelled}
	}
	if len(items) > 1 {
		for _, name := range items {
			stat := func(s string) int64 { return n(cluster.KindStat(name, s)) }
			out[name] = KindCounts{
				Discovered: stat(cluster.KindRouted) + stat(cluster.KindDuplicates),
				Stored:     stat(cluster.KindStored),
				Failed:     stat(cluster.KindFailed) - stat(cluster.KindRecovered),
				Skipped:    stat(cluster.KindSkipped),
				Duplicates: stat(cluster.KindDuplicates),
				Cancelled:  stat(cluster.KindCancelled),
			}
		}
	}
	return out, kindWarnings(kinds, n, kindRule)
}

// kindRule names link rule i of a kind as a job with kinds writes it.
func kindRule(kind string, i int) string { return fmt.Sprintf("kinds.%s.links[%d]", kind, i) }

// shortFormRule names the start kind's link rules of a job in the short
// form as it writes them: next_link, detail_link.
func shortFormRule(spec *jobspec.Job) func(string, int) string {
	return func(kind string, i int) string {
		if i == 0 && spec.NextLink != nil {
			return "next_link"
		}
		return "detail_link"
	}
}

// kindWarnings names the link rules and fields that matched nothing on
// every page of their kind read so far (none before one is read).
func kindWarnings(kinds map[string]jobspec.PageKind, n func(string) int64, rule func(string, int) string) []string {
	var out []string
	for name, k := range kinds {
		pages := n(cluster.KindPagesStat(name))
		if pages == 0 {
			continue
		}
		for i := range k.Links {
			if n(cluster.RuleFoundStat(name, i)) == 0 {
				out = append(out, fmt.Sprintf("%s: matched nothing on %d pages of kind %s", rule(name, i), pages, name))
			}
		}
		for field := range k.Fields {
			if n(cluster.FieldEmptyStat(name, field)) >= pages {
				out = append(out, fmt.Sprintf("kinds.%s.fields.%s: matched nothing on %d pages of kind %s", name, field, pages, name))
			}
		}
	}
	sort.Strings(out)
	return out
}
