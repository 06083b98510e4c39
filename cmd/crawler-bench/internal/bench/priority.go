package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// The priority benchmark's shapes: one job of two item kinds, or two jobs
// on the same slaves.
const (
	PriorityMixed   = "mixed job (two kinds)"
	PriorityTwoJobs = "two jobs"
)

// PriorityOptions configures the priority benchmark: a site whose list
// pages each link High pages of one kind and Low of another, crawled
// with priorities (the high kind, or the high job, at Priority) and
// without (all at 0), the same cluster shape each time.
type PriorityOptions struct {
	// Binary is the crawler executable to start as master and slaves.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// High and Low are the pages of high and of low priority.
	High, Low int
	// Lists is how many list pages (all seeds) link them.
	Lists int
	// Priority is the high kind's (or job's) priority; the low one's is 0.
	Priority int
	// Latency is added to every detail page's answer.
	Latency time.Duration
	// Slaves is the cluster's slaves, Concurrency each one's.
	Slaves, Concurrency int
	// Timeout bounds each crawl.
	Timeout time.Duration
}

// DefaultPriorityOptions are the priority benchmark's defaults: 500 high
// pages beside 2,000 low ones, 50 ms each, two slaves of 8.
func DefaultPriorityOptions() PriorityOptions {
	return PriorityOptions{RedisURL: "redis://127.0.0.1:6379/0", High: 500, Low: 2000, Lists: 10, Priority: 5,
		Latency: 50 * time.Millisecond, Slaves: 2, Concurrency: 8, Timeout: 5 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o PriorityOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench priority: no crawler binary")
	case o.High < 1 || o.High > 100_000:
		return cluster.Invalid("High", o.High, "is outside 1..100000")
	case o.Low < 1 || o.Low > 100_000:
		return cluster.Invalid("Low", o.Low, "is outside 1..100000")
	case o.Lists < 1 || o.Lists > 1000:
		return cluster.Invalid("Lists", o.Lists, "is outside 1..1000")
	case o.Priority < 1 || o.Priority > jobspec.MaxPriority:
		return cluster.Invalid("Priority", o.Priority, "is outside 1..%d", jobspec.MaxPriority)
	case o.Latency < 0:
		return cluster.Invalid("Latency", o.Latency, "is negative")
	}
	return checkCrew(o.Slaves, o.Concurrency, o.Timeout)
}

// checkCrew checks a benchmark's cluster shape and time limit, by field.
func checkCrew(slaves, concurrency int, timeout time.Duration) error {
	switch {
	case slaves < 1 || slaves > cluster.DefaultMaxSlaves:
		return cluster.Invalid("Slaves", slaves, "is outside 1..%d", cluster.DefaultMaxSlaves)
	case concurrency < 1 || concurrency > 10_000:
		return cluster.Invalid("Concurrency", concurrency, "is outside 1..10000")
	case timeout <= 0:
		return cluster.Invalid("Timeout", timeout, "must be positive")
	}
	return nil
}

// Args are the `crawler-bench priority` flags that reproduce o (Redis aside).
func (o PriorityOptions) Args() []string {
	return []string{"--high", strconv.Itoa(o.High), "--low", strconv.Itoa(o.Low), "--lists", strconv.Itoa(o.Lists),
		"--priority", strconv.Itoa(o.Priority), "--latency", o.Latency.String(), "--slaves", strconv.Itoa(o.Slaves),
		"--concurrency", strconv.Itoa(o.Concurrency)}
}

// PriorityRun is one crawl of the benchmark.
type PriorityRun struct {
	Shape string
	// Prioritized says the high pages had priority Options.Priority;
	// else every page had 0 (the naive baseline: the order found).
	Prioritized bool
	// LowAtLastHigh is how many low pages were fetched when the last high
	// page was.
	LowAtLastHigh int
	// HighDone and AllDone are when the last high page, and the last page,
	// were fetched, from the submission.
	HighDone, AllDone time.Duration
}

// PriorityReport is the benchmark's runs and its options.
type PriorityReport struct {
	Options PriorityOptions
	Runs    []PriorityRun
}

// Priority runs the priority benchmark: each shape with priorities and
// without, a cluster of its own each time.
func Priority(ctx context.Context, opts PriorityOptions) (rep PriorityReport, err error) {
	rep.Options = opts
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	ropts, err := redis.ParseURL(opts.RedisURL)
	if err != nil {
		return rep, fmt.Errorf("--redis: %w", err)
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()
	for _, shape := range []string{PriorityMixed, PriorityTwoJobs} {
		for _, on := range []bool{false, true} {
			run, err := priorityRun(ctx, rdb, opts, shape, on)
			if err != nil {
				return rep, fmt.Errorf("%s, priority %t: %w", shape, on, err)
			}
			rep.Runs = append(rep.Runs, run)
		}
	}
	return rep, nil
}

// priorityRun crawls one shape on a cluster of its own.
func priorityRun(ctx context.Context, rdb *redis.Client, opts PriorityOptions, shape string, on bool) (run PriorityRun, err error) {
	run = PriorityRun{Shape: shape, Prioritized: on}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cl, err := startCluster(ctx, rdb, CrawlOptions{Binary: opts.Binary, RedisURL: opts.RedisURL, Concurrency: opts.Concurrency}, opts.Slaves)
	if cl != nil {
		defer func() {
			err = errors.Join(err, cl.stop())
			deletePrefix(context.WithoutCancel(ctx), rdb, cl.prefix)
		}()
	}
	if err != nil {
		return run, err
	}
	jobs, err := client.New(rdb, client.Options{Keys: cl.Keys()})
	if err != nil {
		return run, err
	}
	site, err := servePrioritySite(opts)
	if err != nil {
		return run, err
	}
	defer site.close()
	start := time.Now()
	names, err := submitPriorityJobs(ctx, jobs, opts, site.addr, shape, on)
	if err != nil {
		return run, err
	}
	for _, name := range names {
		if _, err := waitFinished(ctx, rdb, cl, name, start); err != nil {
			return run, err
		}
	}
	run.LowAtLastHigh, run.HighDone, run.AllDone = site.result(start)
	return run, nil
}

// submitPriorityJobs submits the shape's jobs: one of two kinds, or a job
// of the low pages and then one of the high pages. With on, the high kind
// or job has opts.Priority.
func submitPriorityJobs(ctx context.Context, jobs *client.Client, opts PriorityOptions, addr, shape string, on bool) ([]string, error) {
	prio, kindPrio := "", ""
	if on {
		prio, kindPrio = fmt.Sprintf("priority: %d\n", opts.Priority), fmt.Sprintf("priority: %d, ", opts.Priority)
	}
	fields := "fields: {title: {css: \"h1\", required: true}}"
	var files []string
	if shape == PriorityMixed {
		files = append(files, priorityJob(opts, addr, "prio-mixed", "", fmt.Sprintf(`kinds:
  start:
    links:
      - {css: "a.hi", kind: high}
      - {css: "a.lo", kind: low}
  high: {item: true, %s%s}
  low:  {item: true, %s}
`, kindPrio, fields, fields)))
	} else {
		files = append(files,
			priorityJob(opts, addr, "prio-low", "", "detail_link: {css: \"a.lo\"}\n"+fields+"\n"),
			priorityJob(opts, addr, "prio-high", prio, "detail_link: {css: \"a.hi\"}\n"+fields+"\n"))
	}
	names := make([]string, 0, len(files))
	for _, yaml := range files {
		spec, err := jobspec.Parse(strings.NewReader(yaml))
		if err != nil {
			return nil, err
		}
		if err := jobs.Submit(ctx, spec); err != nil {
			return nil, err
		}
		names = append(names, spec.Name)
	}
	return names, nil
}

// priorityJob is a job file of the benchmark's site: every list page a
// seed, politeness out of the way (the site is on loopback).
func priorityJob(opts PriorityOptions, addr, name, top, model string) string {
	seeds := make([]string, opts.Lists)
	for i := range seeds {
		seeds[i] = strconv.Quote("http://" + addr + "/list/" + strconv.Itoa(i))
	}
	return fmt.Sprintf("name: %s\n%sseeds: [%s]\nallow_private_networks: true\nobey_robots: false\n"+
		"per_host_rps: %d\nper_host_concurrency: %d\ndedup: {window: 1h, granularity: 1h, capacity: %d}\n%s",
		name, top, strings.Join(seeds, ", "), jobspec.MaxPerHostRPS, jobspec.MaxPerHostInFlight, 4*(opts.High+opts.Low), model)
}

// prioritySite is the benchmark's loopback site: list pages /list/N, each
// linking its share of high pages (/hi/…, class hi) and low ones (/lo/…,
// class lo), interleaved; it notes the order the detail pages are
// fetched in.
type prioritySite struct {
	opts PriorityOptions
	addr string
	srv  *http.Server

	mu            sync.Mutex
	seen          map[string]bool
	high, low     int
	lowAtLastHigh int
	highAt, allAt time.Time
}

func servePrioritySite(opts PriorityOptions) (*prioritySite, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &prioritySite{opts: opts, addr: ln.Addr().String(), seen: map[string]bool{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *prioritySite) close() { _ = s.srv.Close() }

// ServeHTTP answers a list page at once and a detail page after the
// latency, noting it.
func (s *prioritySite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	path := r.URL.Path
	if n, ok := strings.CutPrefix(path, "/list/"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= s.opts.Lists {
			http.NotFound(w, r)
			return
		}
		s.writeList(w, i)
		return
	}
	if !strings.HasPrefix(path, "/hi/") && !strings.HasPrefix(path, "/lo/") {
		http.NotFound(w, r)
		return
	}
	time.Sleep(s.opts.Latency)
	s.note(path)
	fmt.Fprintf(w, "<html><body><h1>%s</h1></body></html>", path)
}

// writeList writes list page i: its share of each kind, interleaved in
// proportion.
func (s *prioritySite) writeList(w io.Writer, i int) {
	fmt.Fprint(w, "<html><body>")
	hi, lo := share(s.opts.High, s.opts.Lists, i), share(s.opts.Low, s.opts.Lists, i)
	for h, l := hi[0], lo[0]; h < hi[1] || l < lo[1]; {
		// the next link is the kind that is further behind its share
		if h < hi[1] && (l >= lo[1] || (h-hi[0])*(lo[1]-lo[0]) <= (l-lo[0])*(hi[1]-hi[0])) {
			fmt.Fprintf(w, `<a class="hi" href="/hi/%d">h</a>`, h)
			h++
		} else {
			fmt.Fprintf(w, `<a class="lo" href="/lo/%d">l</a>`, l)
			l++
		}
	}
	fmt.Fprint(w, "</body></html>")
}

// share is list page i's range [from, to) of n pages over lists pages.
func share(n, lists, i int) [2]int { return [2]int{n * i / lists, n * (i + 1) / lists} }

// note counts a detail page fetched for the first time.
func (s *prioritySite) note(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[path] {
		return
	}
	s.seen[path] = true
	if strings.HasPrefix(path, "/hi/") {
		s.high++
		if s.high == s.opts.High {
			s.lowAtLastHigh, s.highAt = s.low, time.Now()
		}
	} else {
		s.low++
	}
	if s.high+s.low == s.opts.High+s.opts.Low {
		s.allAt = time.Now()
	}
}

// result is what the site saw: the low pages fetched when the last high
// one was, and when the last high page and the last page were, from start.
func (s *prioritySite) result(start time.Time) (lowAtLastHigh int, highDone, allDone time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lowAtLastHigh, s.highAt.Sub(start), s.allAt.Sub(start)
}

// WritePriority prints the priority table in format f.
func WritePriority(w io.Writer, f Format, rep PriorityReport) error {
	return WriteTables(w, f, PriorityTable(rep))
}

// PriorityTable is the priority benchmark's table: for each shape, the
// share of the low pages stored when the last high one was, with and
// without priorities.
func PriorityTable(rep PriorityReport) Table {
	o := rep.Options
	t := Table{
		Caption: fmt.Sprintf("%d high-priority pages beside %d low ones, linked interleaved from %d list pages (all seeds), "+
			"%s a page; one master and %d slaves of concurrency %d, a fresh cluster each row.",
			o.High, o.Low, o.Lists, o.Latency, o.Slaves, o.Concurrency),
		Header: []string{"shape", "priorities", "low pages stored when the last high one was", "share of the low",
			"last high page at", "last page at"},
		Notes: []string{
			"mixed job: one job, kinds high and low; with priorities the high kind has priority " + strconv.Itoa(o.Priority) +
				". two jobs: a job of the low pages submitted, then one of the high pages; with priorities the high job has priority " +
				strconv.Itoa(o.Priority) + ". off: every page at priority 0, the order found (the naive baseline).",
			"stored: the page's answer, noted by the site (a slave stores an item as its page is fetched); times from the submission.",
			"goal (issue 34): the high-priority pages are all stored before 20% of the low ones.",
		},
	}
	for _, r := range rep.Runs {
		prio := "off (all 0)"
		if r.Prioritized {
			prio = "on (" + strconv.Itoa(o.Priority) + " and 0)"
		}
		t.Rows = append(t.Rows, []string{r.Shape, prio, strconv.Itoa(r.LowAtLastHigh),
			fmt.Sprintf("%.1f%%", 100*float64(r.LowAtLastHigh)/float64(o.Low)),
			r.HighDone.Round(10 * time.Millisecond).String(), r.AllDone.Round(10 * time.Millisecond).String()})
	}
	return t
}
