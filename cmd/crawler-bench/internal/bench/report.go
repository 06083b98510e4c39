package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/redisserver"
)

// ReportOptions configures the benchmark report, docs/benchmarks.md: every
// benchmark run once, each on a Redis of its own when RedisServer is set.
type ReportOptions struct {
	// Binary is the crawler executable.
	Binary string
	// RedisServer is the redis-server executable to start for each
	// benchmark; empty means the Redis at RedisURL.
	RedisServer string
	// RedisURL is the Redis used when RedisServer is empty.
	RedisURL string
	// DedupN are the fingerprint counts of the dupefilter comparison.
	DedupN []int
	// Dedup is the dupefilter comparison, N aside.
	Dedup DedupOptions
	// Assign is the assigner comparison.
	Assign AssignOptions
	// Crawls are the crawl benchmarks, one section each.
	Crawls []CrawlOptions
	// Idle is the idle-cost benchmark.
	Idle IdleOptions
	// Memory is the memory check.
	Memory MemoryOptions
	// Site is the one-site comparison with colly; nil skips it.
	Site *SiteOptions
	// Kinds is the crawl model's cost, the shop beside the two-kind
	// crawl; nil skips it.
	Kinds *KindsOptions
	// Render is the rendering benchmark, rendered pages beside plain
	// fetches; nil skips it.
	Render *RenderOptions
	// Recrawl is the adaptive re-crawl beside checking every page; nil
	// skips it.
	Recrawl *RecrawlOptions
	// Priority is the priority benchmark, with priorities beside the
	// order found; nil skips it.
	Priority *PriorityOptions
	// Hosts are the many-host benchmark's runs, one section and one table
	// for all of them; none skips it.
	Hosts []HostsOptions
	// Progress, when set, receives a line as each benchmark starts.
	Progress io.Writer
}

// DefaultReportOptions are the report of `make bench`, about 7 minutes
// on a 2-core machine: the dupefilter at 1M and 10M fingerprints, crawls
// at 0 ms (1-8 slaves, 20,000 pages), and at 200 ms over 8 hosts (1-8
// slaves) and over 4 hosts (1-4 slaves, issue 9's case). The 200 ms crawls
// run at the slaves' default concurrency with the master walking each
// host's list pages from the first (as on a real site), 100 links a list
// page so that the site's chain of list pages is not what limits them;
// one more runs them at concurrency 128 (1-4 slaves), a cluster under
// load, where what costs by the round trip is shared by more pages. The
// many-host section crawls 40, 120 and 1,000 sites on the politeness
// defaults (defaultReportHosts), a few minutes more.
func DefaultReportOptions() ReportOptions {
	zero, slow, issue9 := DefaultCrawlOptions(), DefaultCrawlOptions(), DefaultCrawlOptions()
	zero.Details, zero.Slaves, zero.Hosts = 20_000, []int{1, 2, 4, 8}, 8
	slow.DetailsPerSlave, slow.Slaves, slow.Hosts = 1600, []int{1, 2, 4, 8}, 8
	slow.Latency, slow.Seeds, slow.PerPage = 200*time.Millisecond, SeedsFirst, 100
	issue9 = slow
	issue9.Slaves, issue9.Hosts = []int{1, 2, 4}, 4
	loaded := slow
	loaded.Slaves, loaded.Concurrency, loaded.DetailsPerSlave = []int{1, 2, 4}, 128, 6400
	site, kinds, rendering, recrawl := DefaultSiteOptions(), DefaultKindsOptions(), DefaultRenderOptions(), DefaultRecrawlOptions()
	priority := DefaultPriorityOptions()
	rendering.Pages, rendering.Tabs = 40, []int{1, 2}
	site.Stages = true // the CPU per page by stage, so that a regression shows where it came from (issue 31)
	return ReportOptions{
		RedisServer: "redis-server", RedisURL: "redis://127.0.0.1:6379/0", Site: &site, Kinds: &kinds, Render: &rendering,
		Recrawl: &recrawl, Priority: &priority, DedupN: []int{1_000_000, 10_000_000}, Dedup: DedupOptions{Duration: 10 * time.Second},
		Assign: AssignOptions{Keys: 1_000_000}, Crawls: []CrawlOptions{zero, slow, issue9, loaded},
		Idle: DefaultIdleOptions(), Memory: DefaultMemoryOptions(), Hosts: defaultReportHosts(),
	}
}

// defaultReportHosts are the many-host rows of the report: 40, 120 and
// 1,000 sites at 3 slaves, and 120 at 1 and at 8 slaves (issue 28's goal
// is flat from 1 to 8).
func defaultReportHosts() []HostsOptions {
	bySites, bySlaves := DefaultHostsOptions(), DefaultHostsOptions()
	bySlaves.Hosts, bySlaves.Slaves = []int{120}, []int{1, 8}
	return []HostsOptions{bySites, bySlaves}
}

// QuickReportOptions are a small report, to try the generator in a minute.
func QuickReportOptions() ReportOptions {
	o := DefaultReportOptions()
	o.DedupN, o.Dedup.Duration, o.Assign.Keys = []int{20_000}, time.Second, 100_000
	o.Crawls[0].Details, o.Crawls[0].Slaves = 400, []int{1, 2}
	o.Crawls[1].DetailsPerSlave, o.Crawls[1].Slaves = 200, []int{1, 2}
	o.Crawls = o.Crawls[:2]
	o.Idle.Slaves, o.Idle.Duration = 2, 2*time.Second
	o.Memory.Concurrency, o.Memory.PageBytes, o.Memory.Pages = 32, 1<<20, 64
	o.Site.Details, o.Site.Rounds, o.Site.Latencies = 400, 1, []time.Duration{0}
	o.Kinds.Pages, o.Kinds.Rounds = 400, 1
	o.Render.Pages, o.Render.Tabs = 5, []int{1}
	o.Recrawl.Pages, o.Recrawl.Rounds, o.Recrawl.Every = 40, 4, time.Second
	o.Priority.High, o.Priority.Low = 100, 400
	o.Hosts = o.Hosts[:1]
	o.Hosts[0].Hosts, o.Hosts[0].Slaves, o.Hosts[0].DetailsPerHost, o.Hosts[0].ListPages = []int{8}, []int{1, 3}, 26, 2
	return o
}

// report is one run of the report: its options and the results that the
// goals table reads.
type report struct {
	opts    ReportOptions
	w       io.Writer
	crawls  []crawlRun
	idle    []IdleResult
	memory  *MemoryResult
	site    *SiteReport
	kinds   *KindsReport
	hosts   *HostsReport
	scripts *scriptNames
	redis   string // the Redis version
}

// Report runs every benchmark and writes the Markdown document to w.
func Report(ctx context.Context, w io.Writer, opts ReportOptions) error {
	start := time.Now()
	r := &report{opts: opts, scripts: newScriptNames()}
	var body strings.Builder
	r.w = &body
	for _, section := range []func(context.Context) error{r.oneSite, r.manyHosts, r.dedup, r.assign, r.crawl, r.kindsCost, r.renderCost, r.recrawlCost, r.priorityOrder, r.roundTrips, r.idleCost, r.memoryCheck} {
		if err := section(ctx); err != nil {
			return err
		}
	}
	r.header(w, time.Since(start))
	_, err := io.WriteString(w, body.String())
	return err
}

func (r *report) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "bench report: "+format+"\n", args...)
	}
}

// withRedis runs fn on a Redis of its own, or on the shared one.
func (r *report) withRedis(ctx context.Context, fn func(url string) error) error {
	url, stop, err := UseRedis(ctx, r.opts.RedisServer, r.opts.RedisURL)
	if err != nil {
		return err
	}
	defer stop()
	if r.redis == "" {
		if rdb, err := DialRedis(ctx, url); err == nil {
			r.redis, _ = redisserver.Version(ctx, rdb)
			rdb.Close()
		}
	}
	return fn(url)
}

// command is the command line of a benchmark, as the document shows it.
func (r *report) command(sub string, args []string) string {
	parts := append([]string{"crawler-bench", sub}, args...)
	switch {
	case sub == "assign", sub == "site":
	case r.opts.RedisServer == "":
		parts = append(parts, "--redis", r.opts.RedisURL)
	default:
		parts = append(parts, "--redis-server", r.opts.RedisServer)
	}
	return strings.Join(append(parts, "--format", "md"), " ")
}

// section writes a section's heading, command and tables.
func (r *report) section(title, intro, command string, tables []Table) error {
	fmt.Fprintf(r.w, "\n## %s\n\n%s\n\n```sh\n%s\n```\n\n", title, intro, command)
	if err := WriteTables(r.w, FormatMarkdown, tables...); err != nil {
		return err
	}
	return nil
}

// oneSite is the one-site comparison with colly, the headline: one host
// walked from its first list page, with faults, at 0 and 20 ms.
func (r *report) oneSite(ctx context.Context) error {
	if r.opts.Site == nil {
		return nil
	}
	opts := *r.opts.Site
	opts.Binary, opts.Progress = r.opts.Binary, r.opts.Progress
	if r.opts.RedisServer != "" {
		opts.RedisServer = r.opts.RedisServer
	}
	r.progress("one site, %v, %d rounds of %v", opts.Latencies, opts.Rounds, opts.Crawlers)
	rep, err := Site(ctx, opts)
	if err != nil {
		return fmt.Errorf("one site: %w", err)
	}
	r.site = &rep
	intro := "The shape most users start with: one site, its list pages walked breadth-first from the first one " +
		"(each links the next three), one detail page in twenty faulty (a 404, a 503 once or twice, a connection " +
		"reset, a 1 s stall), crawled by 1 master and 3 slaves, by `crawler run` on its defaults, and by colly v2 " +
		"(Async, Parallelism 16, its own robots.txt handling, retries as ours; cmd/crawler-bench/peers/colly, a module " +
		"of its own) in the same run, interleaved round by round. The bound is the least time any crawler holding " +
		"16 slots of the site can take; each table says how it is worked out."
	return r.section("One site, beside colly", intro, r.command("site", opts.Args()), SiteTables(rep))
}

func (r *report) dedup(ctx context.Context) error {
	for _, n := range r.opts.DedupN {
		opts := r.opts.Dedup
		opts.N = n
		r.progress("dedup, %d fingerprints", n)
		var rep DedupReport
		err := r.withRedis(ctx, func(url string) error {
			rdb, err := DialRedis(ctx, url)
			if err != nil {
				return err
			}
			defer rdb.Close()
			rep, err = Dedup(ctx, rdb, opts)
			return err
		})
		if err != nil {
			return fmt.Errorf("dedup %d: %w", n, err)
		}
		intro := "The dupefilter's modes against the scrapy-redis methods: (a) bloom, (a') bloom with every slice of " +
			"the window full, (a'') the same with the master's in-process copies of the slices, " +
			"(b) scrapy-redis-bloomfilter's GETBIT/SETBIT round trips, (c) scrapy-redis's SET, (d) exact."
		if err := r.section(fmt.Sprintf("Dupefilter, %s fingerprints", count(n)), intro,
			r.command("dedup", opts.Args()), DedupTables(rep)); err != nil {
			return err
		}
	}
	return nil
}

// DialRedis connects to the Redis of a redis:// URL and checks that it
// answers.
func DialRedis(ctx context.Context, url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opts.DisableIdentity = true // Redis before 7.2 refuses CLIENT SETINFO
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return rdb, nil
}

// count writes 1000000 as 1M and 20000 as 20k.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func (r *report) assign(context.Context) error {
	r.progress("assign")
	rep, err := Assign(r.opts.Assign)
	if err != nil {
		return err
	}
	intro := "Our two-level hash (rendezvous second level) against the paper's second level (live[h % n]), jump " +
		"consistent hash and hash rings: speed, balance, and the share of URLs that move when a slave leaves or joins."
	return r.section("Assigner", intro, r.command("assign", r.opts.Assign.Args()), []Table{AssignTable(rep)})
}

func (r *report) crawl(ctx context.Context) error {
	for _, opts := range r.opts.Crawls {
		opts.Binary, opts.scripts = r.opts.Binary, r.scripts
		r.progress("crawl, %v latency, %v slaves", opts.Latency, opts.Slaves)
		var results []CrawlResult
		err := r.withRedis(ctx, func(url string) error {
			opts.RedisURL = url
			var err error
			results, err = Crawl(ctx, opts)
			return err
		})
		if err != nil {
			return err
		}
		r.crawls = append(r.crawls, crawlRun{opts: opts, results: results})
		intro := fmt.Sprintf("Real master and slave processes crawl a loopback site with %v latency per response, "+
			"once per cluster size. The second table says where Redis's commands per page come from; the third, "+
			"what each role sent.", opts.Latency)
		title := "Crawl" + opts.where() + ", slaves " + joinInts(opts.Slaves)
		if err := r.section(title, intro, r.command("crawl", opts.Args()), CrawlTables(opts, results)); err != nil {
			return err
		}
	}
	return nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// kindsCost is the crawl model's cost: the shop with page kinds beside
// the two-kind crawl of as many pages.
func (r *report) kindsCost(ctx context.Context) error {
	if r.opts.Kinds == nil {
		return nil
	}
	opts := *r.opts.Kinds
	opts.Binary, opts.scripts = r.opts.Binary, r.scripts
	r.progress("kinds, %d pages, %d rounds", opts.Pages, opts.Rounds)
	var rep KindsReport
	err := r.withRedis(ctx, func(url string) error {
		opts.RedisURL = url
		var err error
		rep, err = Kinds(ctx, opts)
		return err
	})
	if err != nil {
		return fmt.Errorf("kinds: %w", err)
	}
	r.kinds = &rep
	intro := "What the crawl model of page kinds costs: the demo shop (categories, paginated lists, a JSON API, " +
		"products with typed fields and related links the slaves send back) beside the two-kind job of the demo " +
		"site, the same number of pages stored by the same cluster; the rows say what extra work the shop's crawl had."
	return r.section("Crawl model: page kinds beside two kinds", intro, r.command("kinds", opts.Args()), KindsTables(rep))
}

// recrawlCost is what an adaptive re-crawl fetches and catches beside
// checking every page each round.
func (r *report) recrawlCost(ctx context.Context) error {
	if r.opts.Recrawl == nil {
		return nil
	}
	opts := *r.opts.Recrawl
	opts.Binary = r.opts.Binary
	r.progress("recrawl, %d products, %d rounds", opts.Pages, opts.Rounds)
	var rep RecrawlReport
	err := r.withRedis(ctx, func(url string) error {
		opts.RedisURL = url
		var err error
		rep, err = Recrawl(ctx, opts)
		return err
	})
	if err != nil {
		return fmt.Errorf("recrawl: %w", err)
	}
	intro := "What an adaptive re-crawl (recrawl: {mode: adaptive}) fetches and catches beside checking every " +
		"page each round, on a shop where the same few products change every round and the rest never do; " +
		"both jobs run side by side on one cluster."
	return r.section("Re-crawls: adaptive beside checking everything", intro, r.command("recrawl", opts.Args()),
		[]Table{RecrawlTable(rep)})
}

// priorityOrder is how many low-priority pages are stored before the
// last high-priority one, with priorities and in the order found.
func (r *report) priorityOrder(ctx context.Context) error {
	if r.opts.Priority == nil {
		return nil
	}
	opts := *r.opts.Priority
	opts.Binary = r.opts.Binary
	r.progress("priority, %d high and %d low pages", opts.High, opts.Low)
	var rep PriorityReport
	err := r.withRedis(ctx, func(url string) error {
		opts.RedisURL = url
		var err error
		rep, err = Priority(ctx, opts)
		return err
	})
	if err != nil {
		return fmt.Errorf("priority: %w", err)
	}
	intro := "How many low-priority pages are stored before the last high-priority one: on one job of two item " +
		"kinds, and on two jobs on the same slaves, with priorities (the high kind or job at priority " +
		fmt.Sprint(opts.Priority) + ") beside the same crawl in the order found."
	return r.section("Priorities: high-priority pages first", intro, r.command("priority", opts.Args()),
		[]Table{PriorityTable(rep)})
}

// renderCost is what rendering a page costs beside fetching it.
func (r *report) renderCost(ctx context.Context) error {
	if r.opts.Render == nil {
		return nil
	}
	opts := *r.opts.Render
	r.progress("render, %d pages at %s tabs", opts.Pages, joinInts(opts.Tabs))
	rows, err := Render(ctx, opts)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	intro := "What a page built by script costs when rendered in headless Chromium (render: true), beside a plain " +
		"fetch of the same page: pages/s, CPU per page (the browser's processes included) and the browser's memory per tab."
	return r.section("Rendering beside plain fetches", intro, r.command("render", opts.Args()), []Table{RenderTable(rows)})
}

func (r *report) roundTrips(ctx context.Context) error {
	r.progress("round trips")
	var ways []RoundTripWay
	err := r.withRedis(ctx, func(url string) error {
		var err error
		ways, err = RoundTrips(ctx, url)
		return err
	})
	if err != nil {
		return err
	}
	intro := "What one round trip costs Redis's CPU besides the work it carries. A lightly loaded cluster's calls " +
		"each find Redis asleep (the second row); under load they come back to back and in pipelines. This is why " +
		"the 200 ms crawls above cost Redis more per page than the 0 ms ones, and less as the load rises."
	return r.section("Redis round trips", intro, r.command("roundtrips", nil), []Table{RoundTripTable(ways)})
}

func (r *report) idleCost(ctx context.Context) error {
	opts := r.opts.Idle
	opts.Binary, opts.scripts = r.opts.Binary, r.scripts
	r.progress("idle, %d slaves, %v", opts.Slaves, opts.Duration)
	err := r.withRedis(ctx, func(url string) error {
		opts.RedisURL = url
		var err error
		r.idle, err = Idle(ctx, opts)
		return err
	})
	if err != nil {
		return err
	}
	intro := "What a cluster with no job running costs Redis: a master and slaves started, measured with no job yet " +
		"and again after a small job finished."
	return r.section("Idle cluster", intro, r.command("idle", opts.Args()), IdleTables(r.idle))
}

func (r *report) memoryCheck(ctx context.Context) error {
	opts := r.opts.Memory
	opts.Binary = r.opts.Binary
	r.progress("memory, concurrency %d, %s pages", opts.Concurrency, mib(int64(opts.PageBytes)))
	var res MemoryResult
	err := r.withRedis(ctx, func(url string) error {
		opts.RedisURL = url
		var err error
		res, err = Memory(ctx, opts)
		return err
	})
	if err != nil {
		return err
	}
	r.memory = &res
	intro := "A slave's memory must not grow with the pages it holds in flight."
	return r.section("Memory", intro, r.command("memory", opts.Args()), []Table{MemoryTable(res)})
}

// header writes the title, the machine, the goals and how to run it again.
func (r *report) header(w io.Writer, took time.Duration) {
	where := "Each benchmark runs on a Redis of its own started for it (`--redis-server`), so that Redis's CPU " +
		"and command counts are the benchmark's alone."
	if r.opts.RedisServer == "" {
		where = "The benchmarks ran on a shared Redis: other clients' commands and CPU may be in its numbers."
	}
	fmt.Fprintf(w, "# Benchmarks\n\nGenerated by `crawler-bench report -o docs/benchmarks.md` (`make bench`) on %s in %v; "+
		"do not edit by hand, run it again. %s\n\n## Machine\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second), where)
	_ = WriteTables(w, FormatMarkdown, readMachine(r.redis).Table())
	fmt.Fprintf(w, "\n## Goals\n\n")
	_ = WriteTables(w, FormatMarkdown, r.goals())
}
