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
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/shopsite"
	"github.com/crawler-dev/crawler/jobspec"
)

// The recrawl benchmark's modes: every round checks every product, or an
// adaptive re-crawl checks those due.
const (
	RecrawlEverything = "check everything"
	RecrawlAdaptive   = "adaptive"
)

// RecrawlOptions configures the recrawl benchmark: a shop whose products
// change at a fixed share every round (the same products each time, the
// others never), crawled in rounds by two jobs of one cluster side by
// side, one checking every product each round, one with an adaptive
// re-crawl.
type RecrawlOptions struct {
	// Binary is the crawler executable to start as master and slaves.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// MongoURI, when set, makes the slaves store to MongoDB, where the
	// pages' schedules are shared; else each slave keeps a JSON Lines
	// file, and knows the schedules of the pages it stored (a task one
	// slave takes from another's queue is checked whether due or not).
	MongoURI string
	// Pages is the shop's products.
	Pages int
	// ChangePercent is the share of products that change every round.
	ChangePercent int
	// Rounds is how many rounds each job runs.
	Rounds int
	// Every is recrawl_every, and the adaptive job's recrawl.min.
	Every time.Duration
	// Slaves is the cluster's slaves, Concurrency each one's.
	Slaves, Concurrency int
	// Timeout bounds the whole benchmark.
	Timeout time.Duration
}

// DefaultRecrawlOptions are the recrawl benchmark's defaults: 200
// products, 5% changing every round, 40 rounds 3s apart.
func DefaultRecrawlOptions() RecrawlOptions {
	return RecrawlOptions{RedisURL: "redis://127.0.0.1:6379/0", Pages: 200, ChangePercent: 5, Rounds: 40,
		Every: 3 * time.Second, Slaves: 2, Concurrency: 16, Timeout: 20 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o RecrawlOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench recrawl: no crawler binary")
	case o.Pages < 20 || o.Pages > 100_000:
		return cluster.Invalid("Pages", o.Pages, "is outside 20..100000")
	case o.ChangePercent < 1 || o.ChangePercent > 100:
		return cluster.Invalid("ChangePercent", o.ChangePercent, "is outside 1..100")
	case o.Rounds < 2 || o.Rounds > 1000:
		return cluster.Invalid("Rounds", o.Rounds, "is outside 2..1000")
	case o.Every < time.Second || o.Every%time.Second != 0:
		return cluster.Invalid("Every", o.Every, "is not a whole number of seconds, at least 1s")
	}
	return checkCrew(o.Slaves, o.Concurrency, o.Timeout)
}

// Args are the `crawler-bench recrawl` flags that reproduce o (Redis aside).
func (o RecrawlOptions) Args() []string {
	args := []string{"--pages", strconv.Itoa(o.Pages), "--change-percent", strconv.Itoa(o.ChangePercent),
		"--rounds", strconv.Itoa(o.Rounds), "--every", o.Every.String(), "--slaves", strconv.Itoa(o.Slaves),
		"--concurrency", strconv.Itoa(o.Concurrency)}
	if o.MongoURI != "" {
		args = append(args, "--mongo", "URI")
	}
	return args
}

// churn is the products that change every round: every 100/ChangePercent-th.
func (o RecrawlOptions) churn() []int {
	var ids []int
	for id := 0; id < o.Pages && len(ids) < o.Pages*o.ChangePercent/100; id += 100 / o.ChangePercent {
		ids = append(ids, id)
	}
	return ids
}

// RecrawlRun is what one job's re-crawl rounds (2 to Rounds) cost and
// caught; round 1 finds every product new in both modes.
type RecrawlRun struct {
	Mode   string
	Pages  int
	Rounds int
	// Requests is the product requests the shop answered in rounds 2 to
	// Rounds (in full or 304), Checked what the job counted as checked.
	Requests, Checked int64
	// Changes is the changes the shop made in those rounds (each changing
	// product once a round), Caught those found changed in the round they
	// were made.
	Changes, Caught int64
	// NotDue is the products left unchecked as not due.
	NotDue int64
	// Wall is rounds 2 to Rounds' wall time.
	Wall time.Duration
}

// RecrawlReport is the recrawl benchmark's runs and its options.
type RecrawlReport struct {
	Options RecrawlOptions
	Runs    []RecrawlRun
}

// Recrawl runs the recrawl benchmark: one cluster, two shops, two jobs
// side by side.
func Recrawl(ctx context.Context, opts RecrawlOptions) (rep RecrawlReport, err error) {
	rep.Options = opts
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	ropts, err := redis.ParseURL(opts.RedisURL)
	if err != nil {
		return rep, fmt.Errorf("--redis: %w", err)
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()
	cl, err := startCluster(ctx, rdb, CrawlOptions{Binary: opts.Binary, RedisURL: opts.RedisURL, MongoURI: opts.MongoURI,
		Concurrency: opts.Concurrency}, opts.Slaves)
	if cl != nil {
		defer func() {
			err = errors.Join(err, cl.stop())
			deletePrefix(context.WithoutCancel(ctx), rdb, cl.prefix)
		}()
	}
	if err != nil {
		return rep, err
	}
	jobs, err := client.New(rdb, client.Options{Keys: cl.Keys()})
	if err != nil {
		return rep, err
	}
	runs := make([]*recrawlJob, 0, 2)
	for _, mode := range []string{RecrawlEverything, RecrawlAdaptive} {
		j, err := startRecrawlJob(ctx, jobs, opts, mode)
		if err != nil {
			return rep, err
		}
		defer j.close()
		runs = append(runs, j)
	}
	rep.Runs = make([]RecrawlRun, len(runs))
	g, gctx := errgroup.WithContext(ctx)
	for i, j := range runs { // followed side by side: each job's rounds run at their own pace
		g.Go(func() error {
			var err error
			rep.Runs[i], err = j.wait(gctx, jobs, cl)
			return err
		})
	}
	return rep, g.Wait()
}

// recrawlJob is one of the benchmark's jobs and the shop it crawls.
type recrawlJob struct {
	mode, name string
	opts       RecrawlOptions
	site       *shopsite.Site
	srv        *http.Server
}

// startRecrawlJob serves a shop on loopback and submits its job.
func startRecrawlJob(ctx context.Context, jobs *client.Client, opts RecrawlOptions, mode string) (*recrawlJob, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	j := &recrawlJob{mode: mode, opts: opts, site: shopsite.New(opts.Pages, true, 0), name: "recrawl-everything"}
	j.site.ChangeEachRound(opts.churn()...)
	j.srv = &http.Server{Handler: j.site, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = j.srv.Serve(ln) }()
	every := strconv.Itoa(int(opts.Every/time.Second)) + "s"
	yaml := fmt.Sprintf(`seeds: ["http://%s/list"]
allow_private_networks: true
detail_link: {css: "a.p"}
fields: {title: {css: "h1", required: true}}
recrawl_every: %s
dedup: {window: 1h, granularity: 1h, capacity: %d}
per_host_rps: %d
per_host_concurrency: %d
`, ln.Addr(), every, opts.Pages*opts.Rounds*2, jobspec.MaxPerHostRPS, jobspec.MaxPerHostInFlight)
	if mode == RecrawlAdaptive {
		j.name = "recrawl-adaptive"
		yaml += "recrawl: {mode: adaptive, min: " + every + ", max: 30d}\n"
	}
	spec, err := jobspec.Parse(strings.NewReader("name: " + j.name + "\n" + yaml))
	if err != nil {
		j.close()
		return nil, err
	}
	if err := jobs.Submit(ctx, spec); err != nil {
		j.close()
		return nil, err
	}
	return j, nil
}

func (j *recrawlJob) close() { _ = j.srv.Close() }

// wait follows the job until round Rounds is finished, noting the shop's
// answers when round 1 and round Rounds finish, and reads what the rounds
// between counted.
func (j *recrawlJob) wait(ctx context.Context, jobs *client.Client, cl *crawlCluster) (RecrawlRun, error) {
	run := RecrawlRun{Mode: j.mode, Pages: j.opts.Pages, Rounds: j.opts.Rounds}
	answered := func() int64 { return j.site.Full() + j.site.NotModified() }
	var first int64
	var firstAt time.Time
	for {
		st, err := jobs.Status(ctx, j.name)
		if err != nil {
			return run, err
		}
		finished := st.State == cluster.StateFinished
		if finished && st.Round == 1 && firstAt.IsZero() {
			first, firstAt = answered(), time.Now()
		}
		if finished && st.Round >= int64(j.opts.Rounds) {
			if firstAt.IsZero() || st.Round > int64(j.opts.Rounds) {
				return run, fmt.Errorf("job %s: missed the end of round 1 or %d (polling too slow)", j.name, j.opts.Rounds)
			}
			run.Requests, run.Wall = answered()-first, time.Since(firstAt)
			j.count(&run, st)
			return run, nil
		}
		select {
		case <-ctx.Done():
			return run, fmt.Errorf("job %s at round %d: %w", j.name, st.Round, ctx.Err())
		case <-cl.exited:
			return run, cl.exitError()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// count reads rounds 2 to Rounds' counters into run.
func (j *recrawlJob) count(run *RecrawlRun, st *client.Status) {
	for r := 2; r <= j.opts.Rounds; r++ {
		c := st.Rounds[strconv.Itoa(r)]
		run.Checked += c.New + c.Changed + c.Unchanged + c.NotModified
		run.Caught += c.Changed
		run.NotDue += c.SkippedNotDue
	}
	run.Changes = int64(len(j.opts.churn()) * (j.opts.Rounds - 1))
}

// Share is what a run's requests cost beside the run's that checks
// everything, in percent (0 without it).
func (rep RecrawlReport) Share(r RecrawlRun) float64 {
	for _, all := range rep.Runs {
		if all.Mode == RecrawlEverything && all.Requests > 0 {
			return 100 * float64(r.Requests) / float64(all.Requests)
		}
	}
	return 0
}

// WriteRecrawl prints the recrawl table in format f.
func WriteRecrawl(w io.Writer, f Format, rep RecrawlReport) error {
	return WriteTables(w, f, RecrawlTable(rep))
}

// RecrawlTable is the recrawl benchmark's table: what each mode fetched
// and caught over the re-crawl rounds.
func RecrawlTable(rep RecrawlReport) Table {
	o := rep.Options
	t := Table{
		Caption: fmt.Sprintf("Re-crawls of a shop of %d products, %d%% of them changing every round and the rest never: "+
			"rounds 2-%d, a round every %s after the last, one cluster (a master, %d slaves, items in %s), both jobs side by side.",
			o.Pages, o.ChangePercent, o.Rounds, o.Every, o.Slaves, storeName(o.MongoURI)),
		Header: []string{"mode", "product requests", "per round", "of checking everything", "changes made", "caught in their round",
			"caught", "not due"},
		Notes: []string{
			"product requests: what the shop answered (in full or 304) in rounds 2 to the last; round 1 finds every product new in both modes.",
			"caught in their round: the products the job found changed (changed@round), each the change made as that round began; " +
				"a change a round not checked is superseded by the next, and counts as missed.",
			"goal (issue 34): adaptive catches at least 95% of the changes within one round, fetching at most 20% of checking everything.",
		},
	}
	for _, r := range rep.Runs {
		caught := 0.0
		if r.Changes > 0 {
			caught = 100 * float64(r.Caught) / float64(r.Changes)
		}
		t.Rows = append(t.Rows, []string{r.Mode, strconv.FormatInt(r.Requests, 10),
			fmt.Sprintf("%.1f", float64(r.Requests)/float64(r.Rounds-1)), fmt.Sprintf("%.1f%%", rep.Share(r)),
			strconv.FormatInt(r.Changes, 10), strconv.FormatInt(r.Caught, 10), fmt.Sprintf("%.1f%%", caught),
			strconv.FormatInt(r.NotDue, 10)})
	}
	return t
}
