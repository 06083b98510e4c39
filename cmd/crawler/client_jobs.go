package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/jobspec"
)

// checkPreviousRun refuses to submit a job of the same name as one that
// finished within its dupefilter window: the pages it fetched are still
// duplicates, so an edited job submitted again would fetch only new pages.
// With force it warns and lets the submission go on.
func checkPreviousRun(cmd *cobra.Command, cl *client.Client, cf clusterFlags, spec *jobspec.Job, force bool) error {
	window := spec.Dedup.Window.Std()
	prev, err := cl.PreviousRun(cmd.Context(), spec.Name, window)
	if err != nil || prev == nil {
		return err
	}
	finished, _ := time.Parse(time.RFC3339, prev.FinishedAt)
	what := fmt.Sprintf("job %s finished %s ago and stored %d pages; its dupefilter remembers them for %s,\n"+
		"  so submitted again it would fetch only pages new since then", spec.Name,
		time.Since(finished).Round(time.Second), prev.Counters.Stored, window)
	if force {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s (--force: submitting anyway).\n", what)
		return nil
	}
	return fmt.Errorf("%s.\n  To crawl everything again: %s, then submit.\n"+
		"  To submit anyway, knowing most pages will be duplicates: add --force", what,
		cf.command("client reset", "--job", spec.Name, "--yes"))
}

func newJobsCmd() *cobra.Command {
	var (
		cf     clusterFlags
		af     apiFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "jobs",
		Short:   "List the submitted jobs with their state and counters",
		Example: `  crawler client jobs --redis redis://10.0.0.1:6379/0`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return jobsOverAPI(cmd, ac, asJSON) }); done {
				return err
			}
			cl, closeRedis, err := cf.openClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeRedis()
			jobs, err := cl.Jobs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONLines(cmd.OutOrStdout(), jobs)
			}
			return printJobs(cmd.OutOrStdout(), jobs)
		},
	}
	cf.register(cmd)
	af.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per job")
	return cmd
}

func printJobs(w io.Writer, jobs []*client.Status) error {
	if len(jobs) == 0 {
		fmt.Fprintln(w, "no jobs")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "JOB\tSTATE\tROUND\tDISCOVERED\tSTORED\tFAILED\tSKIPPED\tDUPLICATES\tCANCELLED\tQUEUED\tIN FLIGHT\tSUBMITTED\t")
	for _, st := range jobs {
		c := st.Counters
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", st.Job, stateText(st), st.Round, c.Discovered,
			c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Cancelled, c.Queued, c.InFlight, shortTime(st.SubmittedAt))
	}
	return tw.Flush()
}

func shortTime(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.Local().Format("2006-01-02 15:04")
}

func newCancelCmd() *cobra.Command {
	var (
		cf  clusterFlags
		af  apiFlags
		job string
	)
	cmd := &cobra.Command{
		Use:   "cancel",
		Short: "Stop a job: its master drops the tasks still queued (counted as cancelled) and finishes it",
		Example: `  crawler client cancel --job news
  crawler client cancel --job news && crawler client status --job news --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return cancelOverAPI(cmd, ac, job) }); done {
				return err
			}
			cl, closeRedis, err := cf.openForJob(cmd.Context(), job)
			if err != nil {
				return err
			}
			defer closeRedis()
			finished, err := cl.Cancel(cmd.Context(), job)
			if err != nil {
				return err
			}
			printCancelled(cmd, job, finished)
			return nil
		},
	}
	cf.register(cmd)
	af.register(cmd)
	cmd.Flags().StringVar(&job, "job", "", "job name")
	return cmd
}

// printCancelled says what a cancel did: finished the job at once, or
// asked its master to.
func printCancelled(cmd *cobra.Command, job string, finished bool) {
	if finished {
		fmt.Fprintf(cmd.OutOrStdout(), "job %s: cancelled (no master had taken it up); it can be reset or submitted again\n", job)
		return
	}
	fmt.Fprintf(cmd.OutOrStdout(), "job %s: cancel requested; its master drops what is queued and finishes the job "+
		"once the pages in flight are done (status --wait waits for it)\n", job)
}

func newResetCmd() *cobra.Command {
	var (
		cf  clusterFlags
		af  apiFlags
		job string
		yes bool
	)
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Forget a finished job: its state, counters and dupefilter (items in the store are kept)",
		Long: `reset removes everything Redis keeps of a job that is not running: its spec,
state, counters, seeds, dupefilter and near-duplicate index. Submitted again,
the job fetches every page afresh instead of only what is new since the
dupefilter window began. The items and failures already in MongoDB are kept.`,
		Example: `  crawler client reset --job news          # asks for confirmation
  crawler client reset --job news --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if job == "" {
				return errNoJob
			}
			if !yes && !confirm(cmd, fmt.Sprintf("forget job %s and its dupefilter? [y/N] ", job)) {
				return errors.New("not reset (confirm with y, or pass --yes)")
			}
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return resetOverAPI(cmd, ac, job) }); done {
				return err
			}
			cl, closeRedis, err := cf.openClient(cmd.Context())
			if err != nil {
				return err
			}
			defer closeRedis()
			n, err := cl.Reset(cmd.Context(), job)
			if err != nil {
				return err
			}
			printReset(cmd, job, n)
			return nil
		},
	}
	cf.register(cmd)
	af.register(cmd)
	cmd.Flags().StringVar(&job, "job", "", "job name")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	return cmd
}

// printReset says what a reset removed.
func printReset(cmd *cobra.Command, job string, keys int) {
	fmt.Fprintf(cmd.OutOrStdout(), "job %s reset: %d keys removed\n", job, keys)
}

// confirm asks question on stderr and reads a yes from stdin.
func confirm(cmd *cobra.Command, question string) bool {
	fmt.Fprint(cmd.ErrOrStderr(), question)
	line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}
