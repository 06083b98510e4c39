package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

func newPauseCmd() *cobra.Command {
	return newPauseStepCmd("pause",
		"Pause a job: it starts no new request (those in flight finish) and keeps its queue and counters until resumed",
		`  crawler client pause --job news
  crawler client pause --job news --api http://10.0.0.1:8090 --token-file ops.token`,
		(*client.Client).Pause)
}

func newResumeCmd() *cobra.Command {
	return newPauseStepCmd("resume",
		"Resume a paused job from where it stopped",
		`  crawler client resume --job news
  crawler client resume --job news && crawler client status --job news --wait`,
		(*client.Client).Resume)
}

// newPauseStepCmd is client pause or client resume: step, through Redis
// or with --api through the API's POST /jobs/NAME/ACTION.
func newPauseStepCmd(action, short, example string, step func(*client.Client, context.Context, string) (string, error)) *cobra.Command {
	var (
		cf  clusterFlags
		af  apiFlags
		job string
	)
	cmd := &cobra.Command{
		Use:     action,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if done, err := af.overAPI(cmd, func(ac *apiCaller) error { return pauseOverAPI(cmd, ac, job, action) }); done {
				return err
			}
			cl, closeRedis, err := cf.openForJob(cmd.Context(), job)
			if err != nil {
				return err
			}
			defer closeRedis()
			state, err := step(cl, cmd.Context(), job)
			if err != nil {
				return err
			}
			printPaused(cmd, job, action, state)
			return nil
		},
	}
	cf.register(cmd)
	af.register(cmd)
	cmd.Flags().StringVar(&job, "job", "", "job name")
	return cmd
}

// printPaused says what a pause or a resume did; state is the state the
// job was paused in, or went back to.
func printPaused(cmd *cobra.Command, job, action, state string) {
	out := cmd.OutOrStdout()
	switch {
	case action == "resume" && state == cluster.StateFinished:
		fmt.Fprintf(out, "job %s: resumed; it is between rounds, and starts its next round when due (at once if one came due while paused)\n", job)
	case action == "resume":
		fmt.Fprintf(out, "job %s: resumed (%s)\n", job, state)
	case state == cluster.StateFinished:
		fmt.Fprintf(out, "job %s: paused between rounds; no round starts until it is resumed (client resume)\n", job)
	default:
		fmt.Fprintf(out, "job %s: paused (it was %s); requests in flight finish, nothing new starts until client resume\n", job, state)
	}
}
