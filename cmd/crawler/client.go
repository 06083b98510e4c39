package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/redact"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/store"
)

func newClientCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Submit jobs, follow their progress and export their results",
		Example: `  crawler client submit  --redis redis://10.0.0.1:6379/0 --job news.yaml
  crawler client status  --redis redis://10.0.0.1:6379/0 --job news --watch
  crawler client results --mongo mongodb://10.0.0.1:27017/crawler --job news -o news.jsonl
  crawler client jobs    --redis redis://10.0.0.1:6379/0`,
	}
	cmd.AddCommand(newSubmitCmd(), newStatusCmd(), newResultsCmd(), newRetryFailedCmd(), newProxiesCmd(),
		newJobsCmd(), newCancelCmd(), newPauseCmd(), newResumeCmd(), newResetCmd())
	return cmd
}

// readJobFile parses and validates a job file.
func readJobFile(path string) (*jobspec.Job, error) {
	if path == "" {
		return nil, errors.New("--job: a job file is required")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--job: %w", err)
	}
	defer f.Close()
	spec, err := jobspec.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

func newSubmitCmd() *cobra.Command {
	var (
		cf       clusterFlags
		af       apiFlags
		jobFile  string
		force    bool
		priority int
	)
	cmd := &cobra.Command{
		Use:   "submit",
		Short: "Validate a job file and enqueue it; prints the job's name",
		Example: `  crawler client submit --redis redis://10.0.0.1:6379/0 --job news.yaml
  name=$(crawler client submit --job news.yaml) && crawler client status --job "$name" --wait
  crawler client submit --job news.yaml --force   # again within its dedup window: only new pages are fetched
  crawler client submit --job small.yaml --priority 5   # its tasks go before those of jobs of lower priority`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prio := submitPriority(cmd, priority)
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return submitOverAPI(cmd, ac, jobFile, force, prio) }); done {
				return err
			}
			spec, err := readJobFile(jobFile)
			if err != nil {
				return err
			}
			if prio != nil {
				if err := spec.SetPriority("--priority", *prio); err != nil {
					return err
				}
			}
			cl, closeRedis, err := cf.openClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeRedis()
			if err := checkPreviousRun(cmd, cl, cf, spec, force); err != nil {
				return err
			}
			if err := cl.Submit(cmd.Context(), spec); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), spec.Name)
			warnNoCrew(cmd, cl, cf, spec)
			return nil
		},
	}
	cf.register(cmd)
	af.register(cmd)
	cmd.Flags().StringVar(&jobFile, "job", "", "job file (YAML)")
	cmd.Flags().BoolVar(&force, "force", false, "submit even when a job of this name finished within its dedup window (its pages are duplicates until the window passes)")
	cmd.Flags().IntVar(&priority, "priority", 0, "the job's priority on the slaves, -100..100, higher first (default: the job file's priority, else 0)")
	return cmd
}

// submitPriority is the --priority given, or nil when the flag is not set
// (the job file's priority stands).
func submitPriority(cmd *cobra.Command, priority int) *int {
	if !cmd.Flags().Changed("priority") {
		return nil
	}
	return &priority
}

func newStatusCmd() *cobra.Command {
	var (
		cf      clusterFlags
		af      apiFlags
		job     string
		asJSON  bool
		wait    bool
		watch   bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print a job's state and counters; with --wait, wait until it is finished",
		Example: `  crawler client status --job news
  crawler client status --job news --json | jq .counters
  crawler client status --job news --wait --timeout 1h --json   # exit 0 once finished
  crawler client status --job news --watch                      # live: progress, rate, ETA, slaves`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := statusOptions{job: job, asJSON: asJSON, wait: wait, watch: watch, timeout: timeout,
				timeoutGiven: cmd.Flags().Changed("timeout")}
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error {
				if job == "" {
					return errNoJob
				}
				return runStatus(cmd, ac.status, o)
			}); done {
				return err
			}
			cl, closeRedis, err := cf.openForJob(cmd.Context(), job)
			if err != nil {
				return err
			}
			defer closeRedis()
			return runStatus(cmd, cl.Status, o)
		},
	}
	cf.register(cmd)
	af.register(cmd)
	f := cmd.Flags()
	f.StringVar(&job, "job", "", "job name")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&wait, "wait", false, "wait until the job is finished (exit 0; 1 if it stored nothing) or --timeout passes (exit 1)")
	f.BoolVar(&watch, "watch", false, "follow the job live until it is finished (a job between rounds: until its next round is): progress, rate, ETA and a table per slave")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits, and --watch when given (else until the job is finished or Ctrl-C)")
	return cmd
}

// statusOptions are client status's flags.
type statusOptions struct {
	job                 string
	asJSON, wait, watch bool
	timeout             time.Duration
	timeoutGiven        bool
}

// runStatus prints the job's status as read (through Redis or the API):
// once, or with --wait once it is finished, or with --watch live until it
// is.
func runStatus(cmd *cobra.Command, read func(context.Context, string) (*client.Status, error), o statusOptions) error {
	ctx := cmd.Context()
	var (
		st  *client.Status
		err error
	)
	switch {
	case o.watch:
		if o.timeoutGiven {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.timeout)
			defer cancel()
		}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		w := newWatch(cmd.OutOrStdout())
		st, err = client.Follow(ctx, o.job, read, time.Second, w.show, watchDone())
		w.done()
		if ctx.Err() != nil && cmd.Context().Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			return nil // Ctrl-C: the user stopped watching
		}
	case o.wait:
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
		st, err = client.Follow(ctx, o.job, read, 500*time.Millisecond, nil,
			func(st *client.Status) bool { return st.State == cluster.StateFinished })
	default:
		st, err = read(ctx, o.job)
	}
	if st != nil {
		printStatus(cmd.OutOrStdout(), st, o.asJSON)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("job %s not finished within --timeout %s", o.job, o.timeout)
	}
	if err == nil && (o.wait || o.watch) && st != nil {
		return storedNothing(st)
	}
	return err
}

// warnNoCrew warns, on stderr, when no master or no slave serves the
// Redis and prefix a job was submitted to: the job would wait silently
// (every command defaults --redis to 127.0.0.1:6379); and when the job
// renders item pages and no live slave can render them: those tasks wait
// for one.
func warnNoCrew(cmd *cobra.Command, cl *client.Client, cf clusterFlags, spec *jobspec.Job) {
	crew, err := cl.Crew(cmd.Context())
	where := fmt.Sprintf("--redis %s --prefix %s", redact.URL(cf.redis), cf.prefix)
	switch {
	case err != nil:
		return
	case !crew.MasterRan:
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: no master is registered at %s (the defaults are %s and %s): "+
			"the job waits until one starts there; check that the master has the same --redis and --prefix\n",
			where, defaultRedis, cluster.DefaultPrefix)
	case crew.Slaves == 0:
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: no slave is live at %s: the job waits until one starts there\n", where)
	case crew.Renderers == 0 && spec.Renders():
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: the job renders pages (render: true) and none of the %d live slaves at %s can "+
			"render (none has a browser): their tasks wait until a slave started with a browser joins (--browser PATH)\n", crew.Slaves, where)
	}
}

// storedNothing is the error of --wait and --watch for a job that
// finished without storing an item: saying why, and where the failures
// are.
func storedNothing(st *client.Status) error {
	why := st.Counters.NothingStored()
	if why == "" {
		return nil
	}
	return fmt.Errorf("job %s %s and stored nothing: %s; its failures are in the failed collection (with --output, in each slave's .failed.jsonl file)",
		st.Job, stateText(st), why)
}

func printStatus(w io.Writer, st *client.Status, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(st)
		fmt.Fprintln(w, string(b))
		return
	}
	c := st.Counters
	fmt.Fprintf(w, "job %s: %s (round %d)\n", st.Job, stateText(st), st.Round)
	if st.Priority != 0 {
		fmt.Fprintf(w, "  priority %d\n", st.Priority)
	}
	fmt.Fprintf(w, "  list pages %d (failed %d)\n", c.ListPages, c.ListFailed)
	fmt.Fprintf(w, "  details discovered %d = stored %d + failed %d + skipped %d + duplicates %d + cancelled %d + queued %d + in flight %d\n",
		c.Discovered, c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Cancelled, c.Queued, c.InFlight)
	fmt.Fprintf(w, "  offsite %d, invalid links %d, near-duplicates %d, retries %d\n",
		c.Offsite, c.InvalidLinks, c.NearDuplicates, c.Retries)
	printBudget(w, st)
	if c.Rendered > 0 {
		fmt.Fprintf(w, "  rendered in the browser %d (list and detail pages)\n", c.Rendered)
	}
	if c.WaitingForRenderer > 0 {
		fmt.Fprintf(w, "  waiting for a slave that can render %d (discovered, not yet queued)\n", c.WaitingForRenderer)
	}
	printRounds(w, st)
	ids := make([]string, 0, len(st.Slaves))
	for id := range st.Slaves {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		return len(ids[i]) < len(ids[j]) || (len(ids[i]) == len(ids[j]) && ids[i] < ids[j])
	})
	for _, id := range ids {
		s := st.Slaves[id]
		fmt.Fprintf(w, "  slave %s: routed %d, stored %d, failed %d, queued %d, in flight %d\n",
			id, s.Routed, s.Stored, s.Failed, s.Queued, s.InFlight)
	}
	printKinds(w, st)
	printSinkCounts(w, st)
}

// printSinkCounts writes what the slaves' sinks did with the job's
// records: "  sinks: postgres accepted 120, retried 3, refused 0; s3 …".
func printSinkCounts(w io.Writer, st *client.Status) {
	if len(st.Sinks) == 0 {
		return
	}
	parts := make([]string, 0, len(st.Sinks))
	for _, name := range slices.Sorted(maps.Keys(st.Sinks)) {
		c := st.Sinks[name]
		parts = append(parts, fmt.Sprintf("%s accepted %d, retried %d, refused %d", name, c.Accepted, c.Retried, c.Refused))
	}
	fmt.Fprintf(w, "  sinks: %s\n", strings.Join(parts, "; "))
}

// stateText is the job's state, marked when it was cancelled or is being
// cancelled: "finished (cancelled)".
func stateText(st *client.Status) string {
	switch {
	case st.Cancelling:
		return st.State + " (cancelling)"
	case st.CancelledAt != "":
		return st.State + " (cancelled)"
	case st.BudgetReached != "" && st.State == "finished":
		return st.State + " (budget " + st.BudgetReached + " reached)"
	}
	return st.State
}

func newResultsCmd() *cobra.Command {
	var (
		mongo string
		af    apiFlags
		job   string
		out   string
		from  []string
	)
	cmd := &cobra.Command{
		Use:   "results",
		Short: "Export a job's items from MongoDB as JSON Lines, JSON or CSV",
		Example: `  crawler client results --mongo mongodb://10.0.0.2:27017/crawler --job news -o news.jsonl
  crawler client results --job news -o news.csv        # the format comes from the extension
  crawler client results --job news | jq .fields.title  # JSON Lines on stdout
  crawler client results --job news --from 'items-*.jsonl' -o news.csv   # a cluster without MongoDB: the slaves' --output files`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if job == "" {
				return errNoJob
			}
			format := store.FormatJSONL
			if out != "" && out != "-" {
				f, err := store.FormatOf(out)
				if err != nil {
					return fmt.Errorf("-o: %w", err)
				}
				format = f
			}
			if len(from) > 0 {
				return exportFromFiles(cmd, from, job, out, format)
			}
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return resultsOverAPI(cmd, ac, job, out, format) }); done {
				return err
			}
			m, err := openMongo(cmd.Context(), mongo)
			if err != nil {
				return err
			}
			defer m.Close(context.Background())
			return exportResults(cmd, m, job, out, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	af.register(cmd)
	f.StringArrayVar(&from, "from", nil, "read the items from these JSON Lines files instead of MongoDB: a cluster's per-slave --output files, merged, each item once (repeatable; a quoted glob such as 'items-*.jsonl' is expanded)")
	f.StringVar(&job, "job", "", "job name")
	f.StringVarP(&out, "output", "o", "", "write to this file (.jsonl, .json or .csv) instead of stdout (-)")
	return cmd
}

// exportResults writes the job's items to out (stdout for "" or "-"); a
// job with nothing in MongoDB is an error, not an empty file.
func exportResults(cmd *cobra.Command, m *store.Mongo, job, out string, format store.Format) error {
	ctx := cmd.Context()
	exists, err := m.JobExists(ctx, job)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("--job: no items or failures of job %q in this database (is --mongo the database the cluster writes to?)", job)
	}
	return writeExport(cmd, job, out, func(w io.Writer) (int, error) { return m.ExportItemsAs(ctx, job, w, format) })
}

// exportFromFiles writes the job's items from the JSON Lines files that
// the patterns name (the per-slave --output files of a cluster without
// MongoDB; failures files are left out), each item once.
func exportFromFiles(cmd *cobra.Command, patterns []string, job, out string, format store.Format) error {
	var paths []string
	for _, p := range patterns {
		matched, err := filepath.Glob(p)
		if err != nil || len(matched) == 0 {
			return fmt.Errorf("--from: no file matches %s", p)
		}
		for _, m := range matched {
			if !strings.HasSuffix(m, ".failed.jsonl") && !strings.HasSuffix(m, ".partial") {
				paths = append(paths, m)
			}
		}
	}
	var buf bytes.Buffer
	n, err := store.ExportFilesAs(paths, job, &buf, format)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("--job: no items of job %q in %s", job, strings.Join(paths, ", "))
	}
	return writeExport(cmd, job, out, func(w io.Writer) (int, error) {
		_, err := buf.WriteTo(w)
		return n, err
	})
}

// writeExport writes an export to out, through a temporary file renamed
// at the end, or to stdout for "" or "-".
func writeExport(cmd *cobra.Command, job, out string, export func(io.Writer) (int, error)) error {
	if out == "" || out == "-" {
		_, err := export(cmd.OutOrStdout())
		return err
	}
	tmp := out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	n, err := export(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("-o: %w", err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d items of job %s to %s\n", n, job, out)
	return nil
}

// notRetriedWhy says why retry-failed leaves failures of a kind alone.
var notRetriedWhy = map[string]string{
	store.KindList:              "list pages: the next round fetches them again",
	extract.FailureMissingField: "the page answered but lacks a required field: a retry would fail it the same way; see crawler check",
	extract.FailureLimit:        "the page answered but its extraction passed its work budget: a retry would fail it the same way",
	store.KindNotHTML:           "not HTML: skipped on purpose",
	store.KindRobots:            "disallowed by robots.txt: skipped on purpose",
	store.KindOffsite:           "redirected off the allowed domains: skipped on purpose",
}

// printRetried writes how many failed pages retry-failed re-enqueued and
// how many it left alone.
func printRetried(cmd *cobra.Command, job string, n int, notRetried map[string]int) {
	fmt.Fprintf(cmd.OutOrStdout(), "%d failed pages of job %s re-enqueued\n", n, job)
	printNotRetried(cmd.OutOrStdout(), notRetried)
}

// printNotRetried writes how many failures retry-failed left alone, by
// kind, and why.
func printNotRetried(w io.Writer, counts map[string]int) {
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == 0 {
		return
	}
	noun := "failures"
	if total == 1 {
		noun = "failure"
	}
	fmt.Fprintf(w, "%d %s not retryable:\n", total, noun)
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		why := notRetriedWhy[kind]
		if why == "" {
			why = "not a page that could not be fetched"
		}
		fmt.Fprintf(w, "  %d %s (%s)\n", counts[kind], kind, why)
	}
}

func newRetryFailedCmd() *cobra.Command {
	var (
		cf    clusterFlags
		af    apiFlags
		mongo string
		job   string
	)
	cmd := &cobra.Command{
		Use:   "retry-failed",
		Short: "Re-enqueue a job's failed detail pages; prints how many",
		Example: `  crawler client retry-failed --job news --mongo mongodb://10.0.0.2:27017/crawler
  crawler client retry-failed --job news && crawler client status --job news --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return retryOverAPI(cmd, ac, job) }); done {
				return err
			}
			cl, closeRedis, err := cf.openForJob(cmd.Context(), job)
			if err != nil {
				return err
			}
			defer closeRedis()
			m, err := openMongo(cmd.Context(), mongo)
			if err != nil {
				return err
			}
			defer m.Close(context.Background())
			failures, err := m.Failures(cmd.Context(), job)
			if err != nil {
				return err
			}
			n, err := cl.RetryFailed(cmd.Context(), job, failures)
			if err != nil {
				return err
			}
			printRetried(cmd, job, n, client.NotRetried(job, failures))
			return nil
		},
	}
	cf.register(cmd)
	af.register(cmd)
	cmd.Flags().StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	cmd.Flags().StringVar(&job, "job", "", "job name")
	return cmd
}
