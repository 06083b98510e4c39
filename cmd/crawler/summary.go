package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// printRunSummary prints the job's final counters and, like Scrapy's stats
// dump at the end of a crawl, what the requests came to: elapsed time,
// pages/s, bytes, answers by status class and failures by kind.
func printRunSummary(w io.Writer, cfg runConfig, st *client.Status, reg *metrics.Registry, elapsed time.Duration) {
	printStatus(w, st, false)
	stats := gatherStats(reg)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "  elapsed\t%s\n", elapsed.Round(time.Millisecond))
	if s := elapsed.Seconds(); s > 0 {
		fmt.Fprintf(tw, "  pages/s\t%.1f stored, %.1f requests\n", float64(st.Counters.Stored)/s, stats.requests/s)
	}
	if stats.requests > 0 {
		fmt.Fprintf(tw, "  requests\t%.0f (%s)\n", stats.requests, joinCounts(stats.byStatus))
	} else {
		fmt.Fprintf(tw, "  requests\tnone answered\n")
	}
	fmt.Fprintf(tw, "  bytes\t%s\n", humanBytes(stats.bytes))
	if len(stats.failures) > 0 {
		fmt.Fprintf(tw, "  failures\t%s\n", joinCounts(stats.failures))
	}
	_ = tw.Flush()
	if cfg.mongo == "" {
		items := cfg.output
		if cfg.itemsOnStdout() {
			items = "stdout"
		}
		fmt.Fprintf(w, "items: %s", items)
		if st.Counters.Failed+st.Counters.ListFailed+st.Counters.Skipped > 0 {
			fmt.Fprintf(w, "  failures: %s", store.FailuresPath(cfg.output))
		}
		fmt.Fprintln(w)
	}
	printSinks(w, stats)
}

// requestStats are what the process's metrics say about its requests.
type requestStats struct {
	requests, bytes float64
	byStatus        map[string]float64
	failures        map[string]float64
	// sinks counts each sink's records by result (accepted, retried,
	// refused), by sink.
	sinks map[string]map[string]float64
}

func gatherStats(reg *metrics.Registry) requestStats {
	s := requestStats{byStatus: map[string]float64{}, failures: map[string]float64{}, sinks: map[string]map[string]float64{}}
	if reg == nil {
		return s
	}
	fams, err := reg.Gatherer().Gather()
	if err != nil {
		return s
	}
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue()
			switch mf.GetName() {
			case "crawler_fetch_pages_total":
				s.requests += v
				s.byStatus[label(m.GetLabel(), "status")] += v
			case "crawler_fetch_bytes_total":
				s.bytes += v
			case "crawler_failures_total":
				s.failures[label(m.GetLabel(), "kind")] += v
			case "crawler_sink_records_total":
				s.addSink(label(m.GetLabel(), "sink"), label(m.GetLabel(), "result"), v)
			}
		}
	}
	return s
}

func (s requestStats) addSink(name, result string, v float64) {
	if s.sinks[name] == nil {
		s.sinks[name] = map[string]float64{}
	}
	s.sinks[name][result] += v
}

// printSinks writes what each sink did: "sink postgres://…: accepted 120,
// retried 3, refused 0".
func printSinks(w io.Writer, s requestStats) {
	for _, n := range slices.Sorted(maps.Keys(s.sinks)) {
		c := s.sinks[n]
		fmt.Fprintf(w, "sink %s: accepted %.0f, retried %.0f, refused %.0f\n",
			n, c[metrics.SinkAccepted], c[metrics.SinkRetried], c[metrics.SinkRefused])
	}
}

func label(pairs []*dto.LabelPair, name string) string {
	for _, p := range pairs {
		if p.GetName() == name {
			return p.GetValue()
		}
	}
	return ""
}

// sortedKeys are m's keys, largest value first.
func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
	return keys
}

// joinCounts writes "2xx 120, 4xx 3", largest first.
func joinCounts(m map[string]float64) string {
	keys := sortedKeys(m)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func humanBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// maxReasons is how many reasons failureReasons lists.
const maxReasons = 5

// failureReasons says why pages could not be fetched: the most common
// reasons among the job's failures recorded since started, each with its
// count, and where all of them are.
func failureReasons(ctx context.Context, cfg runConfig, job string, since time.Time) string {
	failures, where, err := readFailures(ctx, cfg, job)
	if err != nil {
		return fmt.Sprintf("no failure could be read (%v)", err)
	}
	counts := map[string]float64{}
	for _, f := range failures {
		if f.Job == job && !f.FailedAt.Before(since.Add(-time.Second)) {
			counts[reasonOf(f)]++
		}
	}
	if cfg.failures != nil && *cfg.failures != nil {
		// The file holds a page's first failure only: count this run's.
		inFile := total(counts)
		counts = (*cfg.failures).counts()
		if total(counts) > inFile {
			where += "; a page that failed in an earlier run keeps that run's record there"
		}
	}
	if len(counts) == 0 {
		return "no failure was recorded (are the seeds right?)"
	}
	return fmt.Sprintf("failures by reason (every one is in %s):\n%s", where, listCounts(counts, maxReasons))
}

func total(counts map[string]float64) float64 {
	n := 0.0
	for _, v := range counts {
		n += v
	}
	return n
}

// readFailures reads the job's failures from MongoDB or the failures
// file, and says where a user finds them.
func readFailures(ctx context.Context, cfg runConfig, job string) ([]store.Failure, string, error) {
	if cfg.mongo != "" {
		m, err := openMongo(ctx, cfg.mongo)
		if err != nil {
			return nil, "", err
		}
		defer m.Close(context.Background())
		failures, err := m.Failures(ctx, job)
		where := fmt.Sprintf("the failed collection: mongosh %q --eval 'db.failed.find({job: \"%s\"})'", store.Redact(cfg.mongo), job)
		return failures, where, err
	}
	path := store.FailuresPath(cfg.output)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var failures []store.Failure
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var fl store.Failure
		if json.Unmarshal(sc.Bytes(), &fl) == nil {
			failures = append(failures, fl)
		}
	}
	return failures, path, sc.Err()
}

// reasonOf is a failure's reason without its own URL, so that the pages
// that failed alike count together: "detail page: 404 Not Found".
func reasonOf(f store.Failure) string {
	r := strings.TrimPrefix(f.Reason, "fetch "+f.URL+": ")
	r = strings.ReplaceAll(r, f.URL, "<url>")
	if f.Kind != "" {
		r = f.Kind + " page: " + r
	}
	return r
}

// listCounts writes one "  reason ×count" line per key, largest first,
// at most limit of them and a line for the rest.
func listCounts(m map[string]float64, limit int) string {
	keys := sortedKeys(m)
	var b strings.Builder
	for i, k := range keys {
		if i == limit {
			rest := 0.0
			for _, k := range keys[limit:] {
				rest += m[k]
			}
			fmt.Fprintf(&b, "  %d other reasons ×%.0f\n", len(keys)-limit, rest)
			break
		}
		fmt.Fprintf(&b, "  %s ×%.0f\n", k, m[k])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// printJSONLines writes each value as one line of JSON.
func printJSONLines[T any](w io.Writer, values []T) error {
	enc := json.NewEncoder(w)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}
