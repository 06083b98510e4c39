package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
)

func init() { subcommands = append(subcommands, newDemoCmd) }

func newDemoCmd() *cobra.Command {
	var (
		cfg     runConfig
		details int
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Serve a built-in demo site on loopback and crawl it with `run`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.validate(); err != nil {
				return err
			}
			if details < 1 {
				return fmt.Errorf("--details: %d must be at least 1", details)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, cfg, details, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cfg.register(cmd, "demo-items.jsonl")
	cmd.Flags().IntVar(&details, "details", 300, "unique detail pages on the demo site")
	return cmd
}

func runDemo(ctx context.Context, cfg runConfig, details int, out, progress io.Writer) error {
	site := demosite.New(demosite.Options{Details: details})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo site: %w", err)
	}
	srv := &http.Server{Handler: site}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	base := "http://" + ln.Addr().String()
	spec, err := cluster.ParseJobSpec(strings.NewReader(demosite.JobYAML("demo", base)))
	if err != nil {
		return fmt.Errorf("demo job: %w", err)
	}
	fmt.Fprintf(out, "demo site at %s: %d list pages, %d unique detail pages\n", base, site.ListPages(), details)
	st, err := runAllInOne(ctx, cfg, spec, progress)
	if st != nil {
		printRunSummary(out, cfg, st)
		printDemoCheck(out, site, st)
	}
	return err
}

// printDemoCheck compares the crawl with what the site holds.
func printDemoCheck(w io.Writer, site *demosite.Site, st *client.Status) {
	want, gone := 0, 0
	for _, o := range site.Expected() {
		if o == demosite.Gone {
			gone++
		} else {
			want++
		}
	}
	c := st.Counters
	fmt.Fprintf(w, "expected: %d pages stored, %d gone (404) recorded as failed; got %d stored, %d failed\n",
		want, gone, c.Stored, c.Failed)
	fmt.Fprintf(w, "every link accounted for: discovered %d = stored %d + failed %d + duplicates %d: %v\n",
		c.Discovered, c.Stored, c.Failed, c.Duplicates, c.Discovered == c.Stored+c.Failed+c.Duplicates)
}
