package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

func init() { subcommands = append(subcommands, newClientCmd) }

func newClientCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Submit jobs, follow their progress and export their results",
	}
	cmd.AddCommand(newSubmitCmd(), newStatusCmd(), newResultsCmd(), newRetryFailedCmd())
	return cmd
}

// readJobFile parses and validates a job file.
func readJobFile(path string) (*cluster.JobSpec, error) {
	if path == "" {
		return nil, errors.New("--job: a job file is required")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--job: %w", err)
	}
	defer f.Close()
	spec, err := cluster.ParseJobSpec(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

func newSubmitCmd() *cobra.Command {
	var (
		cf      clusterFlags
		jobFile string
	)
	cmd := &cobra.Command{
		Use:   "submit",
		Short: "Validate a job file and enqueue it; prints the job's name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := readJobFile(jobFile)
			if err != nil {
				return err
			}
			rdb, err := openRedis(cmd.Context(), cf.redis)
			if err != nil {
				return err
			}
			defer rdb.Close()
			if err := client.Submit(cmd.Context(), rdb, cf.keys(), spec); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), spec.Name)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&jobFile, "job", "", "job file (YAML)")
	return cmd
}

func newStatusCmd() *cobra.Command {
	var (
		cf      clusterFlags
		job     string
		asJSON  bool
		wait    bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print a job's state and counters; with --wait, wait until it is finished",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if job == "" {
				return errors.New("--job: a job name is required")
			}
			rdb, err := openRedis(cmd.Context(), cf.redis)
			if err != nil {
				return err
			}
			defer rdb.Close()
			ctx := cmd.Context()
			var st *client.Status
			if wait {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
				st, err = client.Wait(ctx, rdb, cf.keys(), job, cf.maxSlaves, 500*time.Millisecond, nil)
			} else {
				st, err = client.GetStatus(ctx, rdb, cf.keys(), job, cf.maxSlaves)
			}
			if st != nil {
				printStatus(cmd.OutOrStdout(), st, asJSON)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("job %s not finished within --timeout %s", job, timeout)
			}
			return err
		},
	}
	cf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&job, "job", "", "job name")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&wait, "wait", false, "wait until the job is finished (exit 0) or --timeout passes (exit 1)")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	return cmd
}

func printStatus(w io.Writer, st *client.Status, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(st)
		fmt.Fprintln(w, string(b))
		return
	}
	c := st.Counters
	fmt.Fprintf(w, "job %s: %s (round %d)\n", st.Job, st.State, st.Round)
	fmt.Fprintf(w, "  list pages %d (failed %d)\n", c.ListPages, c.ListFailed)
	fmt.Fprintf(w, "  details discovered %d = stored %d + failed %d + duplicates %d + queued %d + in flight %d\n",
		c.Discovered, c.Stored, c.Failed, c.Duplicates, c.Queued, c.InFlight)
	fmt.Fprintf(w, "  offsite %d, invalid links %d, near-duplicates %d, retries %d\n",
		c.Offsite, c.InvalidLinks, c.NearDuplicates, c.Retries)
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
}

func newResultsCmd() *cobra.Command {
	var (
		mongo string
		job   string
		out   string
	)
	cmd := &cobra.Command{
		Use:   "results",
		Short: "Export a job's items from MongoDB as JSON Lines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if job == "" {
				return errors.New("--job: a job name is required")
			}
			m, err := openMongo(cmd.Context(), mongo)
			if err != nil {
				return err
			}
			defer m.Close(context.Background())
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("-o: %w", err)
				}
				defer f.Close()
				w = f
			}
			n, err := m.ExportItems(cmd.Context(), job, w)
			if err != nil {
				return err
			}
			if out != "" && out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d items of job %s to %s\n", n, job, out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	f.StringVar(&job, "job", "", "job name")
	f.StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func newRetryFailedCmd() *cobra.Command {
	var (
		cf    clusterFlags
		mongo string
		job   string
	)
	cmd := &cobra.Command{
		Use:   "retry-failed",
		Short: "Re-enqueue a job's failed detail pages; prints how many",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if job == "" {
				return errors.New("--job: a job name is required")
			}
			rdb, err := openRedis(cmd.Context(), cf.redis)
			if err != nil {
				return err
			}
			defer rdb.Close()
			m, err := openMongo(cmd.Context(), mongo)
			if err != nil {
				return err
			}
			defer m.Close(context.Background())
			failures, err := m.Failures(cmd.Context(), job)
			if err != nil {
				return err
			}
			n, err := client.RetryFailed(cmd.Context(), rdb, cf.keys(), job, failures)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d failed pages of job %s re-enqueued\n", n, job)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	cmd.Flags().StringVar(&job, "job", "", "job name")
	return cmd
}
