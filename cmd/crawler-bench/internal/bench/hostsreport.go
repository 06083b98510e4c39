package bench

import (
	"context"
	"fmt"
	"strings"
)

// manyHosts is the many-host section: every option set's runs in one
// table, each set on a Redis of its own.
func (r *report) manyHosts(ctx context.Context) error {
	if len(r.opts.Hosts) == 0 {
		return nil
	}
	var all HostsReport
	var commands []string
	for i, opts := range r.opts.Hosts {
		rep, err := r.hostsRuns(ctx, opts)
		if err != nil {
			return fmt.Errorf("many hosts: %w", err)
		}
		if i == 0 {
			all.Opts, all.LoadBefore = rep.Opts, rep.LoadBefore
		}
		all.Runs, all.LoadAfter = append(all.Runs, rep.Runs...), rep.LoadAfter
		commands = append(commands, r.command("hosts", opts.Args()))
	}
	r.hosts = &all
	intro := "What a user who crawls many sites at once runs: H small sites, each a loopback address of its own, " +
		"one job seeding every site's first list page on the job file's politeness defaults (5 requests/s and 8 in " +
		"flight per host), 1 master and N slaves. Each row sets the wall time against the politeness bound, the " +
		"least time the busiest host's requests take at its rate, and what each host saw: the most requests at once " +
		"and within one second."
	return r.section("Many hosts on the job file's defaults", intro, strings.Join(commands, "\n"), HostsTables(all))
}

// hostsRuns runs one option set of the many-host benchmark.
func (r *report) hostsRuns(ctx context.Context, opts HostsOptions) (HostsReport, error) {
	opts.Binary, opts.Progress, opts.scripts = r.opts.Binary, r.opts.Progress, r.scripts
	r.progress("many hosts, %s sites, %s slaves", joinInts(opts.Hosts), joinInts(opts.Slaves))
	var rep HostsReport
	err := r.withRedis(ctx, func(url string) error {
		opts.RedisURL = url
		var err error
		rep, err = Hosts(ctx, opts)
		return err
	})
	return rep, err
}
