package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
	fmt.Fprintf(tw, "  requests\t%.0f (%s)\n", stats.requests, joinCounts(stats.byStatus))
	fmt.Fprintf(tw, "  bytes\t%s\n", humanBytes(stats.bytes))
	if len(stats.failures) > 0 {
		fmt.Fprintf(tw, "  failures\t%s\n", joinCounts(stats.failures))
	}
	_ = tw.Flush()
	if cfg.mongo == "" && cfg.output != "-" {
		fmt.Fprintf(w, "items: %s", cfg.output)
		if st.Counters.Failed+st.Counters.ListFailed+st.Counters.Skipped > 0 {
			fmt.Fprintf(w, "  failures: %s", store.FailuresPath(cfg.output))
		}
		fmt.Fprintln(w)
	}
}

// requestStats are what the process's metrics say about its requests.
type requestStats struct {
	requests, bytes float64
	byStatus        map[string]float64
	failures        map[string]float64
}

func gatherStats(reg *metrics.Registry) requestStats {
	s := requestStats{byStatus: map[string]float64{}, failures: map[string]float64{}}
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
			}
		}
	}
	return s
}

func label(pairs []*dto.LabelPair, name string) string {
	for _, p := range pairs {
		if p.GetName() == name {
			return p.GetValue()
		}
	}
	return ""
}

// joinCounts writes "2xx 120, 4xx 3", largest first.
func joinCounts(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
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

// failureReasons says why nothing could be fetched: the most common
// reasons recorded in the failures file, or where to look.
func failureReasons(cfg runConfig, job string) string {
	if cfg.mongo != "" {
		return fmt.Sprintf("see crawler client results and the failed collection of job %s", job)
	}
	path := store.FailuresPath(cfg.output)
	f, err := os.Open(path)
	if err != nil {
		return "no failure was recorded (are the seeds right?)"
	}
	defer f.Close()
	counts := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var fl store.Failure
		if json.Unmarshal(sc.Bytes(), &fl) == nil {
			counts[fl.Reason]++
		}
	}
	return joinCounts(counts) + " (all in " + path + ")"
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
