package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/proxy"
)

func newProxyCmd(a *app) *cobra.Command {
	var (
		cf clusterFlags
		pf proxyFlags
		mf metricsFlag
	)
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Validate proxies into the cluster's shared pool, on a host of its own",
		Long: `proxy reads proxy lists (--proxy-source), checks each proxy through our judge
or --proxy-check-url, keeps the good ones in the cluster's pool in Redis with a
score, rechecks them on a schedule and drops the dead. Any number may run (and
every master given --proxy-source runs one too): a lease lets one work at a
time. Jobs use the pool with proxy: auto or require.`,
		Example: `  crawler proxy --redis redis://10.0.0.1:6379/0 --proxy-source /etc/crawler/proxies.txt
  crawler proxy --redis ... --proxy-source https://lists.example.com/proxies.txt \
      --proxy-judge-listen 0.0.0.0:8091 --proxy-judge-url http://203.0.113.7:8091/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(pf.sources) == 0 {
				return errors.New("--proxy-source: at least one proxy list is required")
			}
			if err := errors.Join(cf.validate(), mf.validate()); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			rdb, err := openRedis(ctx, cf.redis)
			if err != nil {
				return err
			}
			defer rdb.Close()
			reg, err := mf.registry()
			if err != nil {
				return err
			}
			instrument(rdb, reg, metrics.RoleProxy, 0)
			validate, err := pf.validator(rdb, cf.keys(), reg, a.logger.Named("proxy"))
			if err != nil {
				return err
			}
			serveMetrics, err := mf.serve(ctx, reg, a.logger)
			if err != nil {
				return err
			}
			return runServices(ctx, validate, serveMetrics)
		},
	}
	cf.register(cmd)
	pf.register(cmd)
	mf.register(cmd)
	return cmd
}

func newProxiesCmd() *cobra.Command {
	var (
		cf     clusterFlags
		asJSON bool
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "proxies",
		Short: "List the proxy pool: usable proxies with score, latency, age and counts",
		Example: `  crawler client proxies --redis redis://10.0.0.1:6379/0
  crawler client proxies --all          # rejected and dead ones too, with their reasons
  crawler client proxies --json | jq '.proxies[] | {proxy, score, latency_ms}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rdb, err := openRedis(cmd.Context(), cf.redis)
			if err != nil {
				return err
			}
			defer rdb.Close()
			pool, err := proxy.NewPool(rdb, cf.keys(), proxy.DefaultPoolOptions())
			if err != nil {
				return err
			}
			l, err := pool.List(cmd.Context(), all)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(l)
			}
			return printProxies(cmd.OutOrStdout(), l)
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().BoolVar(&all, "all", false, "list the proxies being checked, rejected and dead too, with reasons")
	return cmd
}

// printProxies writes the pool as a table; proxies appear redacted.
func printProxies(w io.Writer, l *proxy.Listing) error {
	fmt.Fprintf(w, "proxies: %d usable, %d tracked, %d removed\n", l.Usable, l.Tracked, l.Removed)
	if l.Breaker.Open {
		fmt.Fprintf(w, "circuit breaker OPEN since %s: %s (the pool is kept as it is)\n",
			l.Breaker.Since.Format(time.RFC3339), l.Breaker.Reason)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROXY\tSTATE\tSCORE\tLATENCY\tSUCCESS\tAGE\tOK\tTIMEOUTS\tBANS\tIN FLIGHT\tREASON")
	for _, e := range l.Proxies {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0fms\t%.0f%%\t%s\t%d\t%d\t%d\t%d\t%s\n", e.Proxy, e.State, e.Score, e.LatencyMS,
			100*e.Success, time.Duration(e.Age).Round(time.Second), e.OK, e.Timeouts, e.Bans, e.InFlight, e.Reason)
	}
	return tw.Flush()
}

// stateCounts counts a listing's proxies by state, for the metrics.
func stateCounts(l *proxy.Listing) map[string]int {
	counts := map[string]int{}
	for _, e := range l.Proxies {
		counts[string(e.State)]++
	}
	return counts
}
