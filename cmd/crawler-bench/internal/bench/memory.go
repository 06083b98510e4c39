package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// MemoryOptions configures the memory check: one slave at a high
// concurrency on big pages must stay under a resident-set limit.
type MemoryOptions struct {
	// Binary is the crawler executable to start as master and slave.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// Concurrency is the slave's --concurrency.
	Concurrency int
	// PageBytes is the size of every detail page.
	PageBytes int
	// Pages is the number of detail pages crawled.
	Pages int
	// Latency is added to every response, so that the slave holds
	// Concurrency pages in flight at once.
	Latency time.Duration
	// Limit is the peak resident set the slave must stay under, in bytes.
	Limit int64
	// Timeout bounds the crawl.
	Timeout time.Duration
}

// DefaultMemoryOptions are the memory check's defaults: 256 pages of 5 MiB
// in flight, under 300 MiB.
func DefaultMemoryOptions() MemoryOptions {
	return MemoryOptions{RedisURL: "redis://127.0.0.1:6379/0", Concurrency: 256, PageBytes: 5 << 20, Pages: 512,
		Latency: 500 * time.Millisecond, Limit: 300 << 20, Timeout: 10 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o MemoryOptions) Validate() error {
	switch {
	case o.Pages < 1:
		return cluster.Invalid("Pages", o.Pages, "must be at least 1")
	case o.Limit < 1:
		return cluster.Invalid("Limit", o.Limit, "must be positive")
	}
	return o.crawl().Validate()
}

// crawl is the crawl the check runs: one slave, one host.
func (o MemoryOptions) crawl() CrawlOptions {
	return CrawlOptions{Binary: o.Binary, RedisURL: o.RedisURL, Details: o.Pages, Slaves: []int{1},
		Concurrency: o.Concurrency, Hosts: 1, Latency: o.Latency, PageBytes: o.PageBytes, Seeds: SeedsAll,
		Timeout: o.Timeout}
}

// Args are the `crawler-bench memory` flags that reproduce o (Redis aside).
func (o MemoryOptions) Args() []string {
	return []string{"--concurrency", strconv.Itoa(o.Concurrency), "--page-bytes", strconv.Itoa(o.PageBytes),
		"--pages", strconv.Itoa(o.Pages), "--latency", o.Latency.String(), "--limit-mib", strconv.FormatInt(o.Limit>>20, 10)}
}

// MemoryResult is the memory check's crawl and its verdict.
type MemoryResult struct {
	Opts  MemoryOptions
	Crawl CrawlResult
}

// Passed reports whether the slave stayed under the limit.
func (r MemoryResult) Passed() bool { return r.Crawl.SlavePeakRSS < r.Opts.Limit }

// Memory crawls opts.Pages big pages with one slave and reports its peak
// resident set.
func Memory(ctx context.Context, opts MemoryOptions) (MemoryResult, error) {
	if err := opts.Validate(); err != nil {
		return MemoryResult{}, err
	}
	copts := opts.crawl()
	copts.scripts = newScriptNames()
	res, err := crawlOnce(ctx, copts, 1)
	if err != nil {
		return MemoryResult{}, fmt.Errorf("memory check: %w", err)
	}
	if res.Pages < int64(opts.Pages) {
		return MemoryResult{Opts: opts, Crawl: res}, errors.New("memory check: not every page was stored")
	}
	return MemoryResult{Opts: opts, Crawl: res}, nil
}

// WriteMemory prints the memory check in format f.
func WriteMemory(w io.Writer, f Format, r MemoryResult) error {
	return WriteTables(w, f, MemoryTable(r))
}

// MemoryTable is the memory check as a table.
func MemoryTable(r MemoryResult) Table {
	verdict := "pass"
	if !r.Passed() {
		verdict = "FAIL"
	}
	t := Table{
		Caption: fmt.Sprintf("Memory: one slave at --concurrency %d on %s detail pages (%v latency, so that %d are in flight at once) "+
			"must stay under %s resident.", r.Opts.Concurrency, mib(int64(r.Opts.PageBytes)), r.Opts.Latency,
			r.Opts.Concurrency, mib(r.Opts.Limit)),
		Header: []string{"slave concurrency", "page size", "pages", "wall", "pages/s", "slave peak RSS", "master peak RSS", "limit", "verdict"},
		Notes:  []string{"peak RSS: VmHWM of /proc/<pid>/status, read when the job finished."},
	}
	c := r.Crawl
	t.AddRow(strconv.Itoa(r.Opts.Concurrency), mib(int64(r.Opts.PageBytes)), strconv.FormatInt(c.Pages, 10),
		c.Wall.Round(10*time.Millisecond).String(), fmt.Sprintf("%.0f", c.PagesPerSecond()),
		mib(c.SlavePeakRSS), mib(c.MasterPeakRSS), mib(r.Opts.Limit), verdict)
	return t
}
