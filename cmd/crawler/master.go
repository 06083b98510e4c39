package main

import (
	"context"
	"errors"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/master"
	"github.com/crawler-dev/crawler/metrics"
)

// masterConfig is what the master command's flags set.
type masterConfig struct {
	cf     clusterFlags
	mongo  string
	output string
	http   string
	hosts  []string // --http-host
	// apiTokens is the API's token file (--api-tokens).
	apiTokens string
	// pageFields maps statuspage.Options fields to their flags (--http).
	pageFields fieldFlags
	mf         metricsFlag
	pf         proxyFlags
	wf         webhookFlags
	opts       master.Options
}

func newMasterCmd(a *app) *cobra.Command {
	c := masterConfig{opts: master.DefaultOptions(), pageFields: fieldFlags{}}
	cmd := &cobra.Command{
		Use:   "master",
		Short: "Coordinate crawls: walk list pages breadth-first, dedup and route detail pages to slaves",
		Example: `  crawler master --redis redis://10.0.0.1:6379/0 --mongo mongodb://10.0.0.2:27017/crawler
  crawler master --redis ... --mongo ... --http 127.0.0.1:8090 --metrics 127.0.0.1:9090
  crawler master --redis ... --mongo ... --proxy-source /etc/crawler/proxies.txt
  crawler master --id master-b --redis ... --mongo ...   # a second master, for availability
  crawler master --redis ... --mongo ... --webhook-secret-file /etc/crawler/webhook.secret`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(c.cf.validate(), c.mf.validate()); err != nil {
				return err
			}
			c.opts.MaxSlaves = c.cf.maxSlaves
			if err := c.opts.Validate(); err != nil {
				return c.cf.fields.name(err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runMaster(ctx, a, c)
		},
	}
	c.cf.register(cmd)
	c.mf.register(cmd)
	a.render.register(cmd)
	c.pf.register(cmd)
	f, fl := cmd.Flags(), c.cf.fields
	c.wf.register(f)
	f.StringVar(&c.mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	f.StringVar(&c.output, "output", "", "write failures to this JSON Lines file instead of MongoDB")
	f.StringVar(&c.http, c.pageFields.flag("Addr", "http"), "", "serve the status page and its JSON API on this address (e.g. 127.0.0.1:8090; a bare port means 127.0.0.1, 0.0.0.0:PORT every interface); empty: off")
	f.StringArrayVar(&c.hosts, "http-host", nil, "a host name the status page answers to besides IP addresses, localhost and this machine's name (repeatable); any other Host is refused (DNS rebinding)")
	f.StringVar(&c.apiTokens, "api-tokens", "", "the HTTP API's bearer tokens (served under /api/v1/ on --http): a file of lines `ROLE TOKEN`, ROLE read or write, TOKEN at least 16 characters or sha256:HEX; read again on SIGHUP. Without it the API is read-only and answers loopback callers only")
	f.StringVar(&c.opts.ID, fl.flag("ID", "id"), c.opts.ID, "name of this master in job leases and logs")
	f.IntVar(&c.opts.ListConcurrency, fl.flag("ListConcurrency", "list-concurrency"), c.opts.ListConcurrency, "most list pages fetched at once (each host's budget decides how many go to it)")
	f.StringVar(&c.opts.AssignMode, fl.flag("AssignMode", "assign-mode"), c.opts.AssignMode, "second level of the assigner: rendezvous or paper (the same on every master)")
	f.Float64Var(&c.opts.MaxWeight, fl.flag("MaxWeight", "max-weight"), c.opts.MaxWeight, "assigner weight scale, the same on every master: slaves of this --weight or more keep all URLs of their own slot")
	f.DurationVar(&c.opts.JobLease, fl.flag("JobLease", "job-lease"), c.opts.JobLease, "how long a job stays owned without renewal; another master takes over after it")
	f.Var(byteSize{&c.opts.MaxMemory}, fl.flag("MaxMemory", "max-memory"), "memory the master stays within (e.g. 512MiB; 0: no bound): half of it bounds the list pages held at once")
	f.Var(byteSize{&c.opts.DedupCache}, fl.flag("DedupCache", "dedup-cache"), "memory per bloom-mode job for copies of its dupefilter's slices, checked here instead of in Redis (0: none)")
	return cmd
}

// runMaster runs the master, and beside it the status page, the metrics
// server and the proxy validator when asked for.
func runMaster(ctx context.Context, a *app, c masterConfig) error {
	p, err := openProcess(ctx, c.cf, c.mongo, c.output)
	if err != nil {
		return err
	}
	defer p.close(a.logger)
	reg, err := c.mf.registry()
	if err != nil {
		return err
	}
	instrument(p.rdb, reg, metrics.RoleMaster, 0)
	rr, err := a.render.get(a.logger, reg)
	if err != nil {
		return err
	}
	defer a.render.close()
	m, err := master.New(c.opts, master.Deps{Redis: p.rdb, Keys: c.cf.keys(), Failures: p.store, Metrics: reg, Renderer: rr, Logger: a.logger})
	if err != nil {
		return c.cf.fields.name(err)
	}
	apiHandler, reloadTokens, err := masterAPI(p, c, a.logger)
	if err != nil {
		return err
	}
	page, err := statusPage(p.rdb, c.cf, c.http, c.hosts, c.pageFields, apiHandler, a.logger)
	if err != nil {
		return err
	}
	validate, err := c.pf.validator(p.rdb, c.cf.keys(), reg, a.logger.Named("proxy"))
	if err != nil {
		return err
	}
	serveMetrics, err := c.mf.serve(ctx, reg, a.logger)
	if err != nil {
		return err
	}
	sendWebhooks, reloadSecret, err := c.wf.notifier(p, c, a.logger)
	if err != nil {
		return err
	}
	return runServices(ctx, m.Run, page, validate, serveMetrics, reloadTokens, sendWebhooks, reloadSecret)
}
