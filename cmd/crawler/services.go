package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/statuspage"
)

// service is one part of a process that runs until its context ends.
type service func(ctx context.Context) error

// runServices runs the services until ctx ends or one of them fails; the
// first failure stops the others and is returned.
func runServices(ctx context.Context, services ...service) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range services {
		if s != nil {
			g.Go(func() error { return s(gctx) })
		}
	}
	return g.Wait()
}

// listenAddr is the address a listener flag (--metrics, --http,
// --proxy-judge-listen, --listen) binds: a bare port (9090 or :9090) means
// the loopback interface, 127.0.0.1:9090, so nothing is exposed to other
// hosts unless asked for with an explicit host (0.0.0.0:9090 for every
// interface, or one address of this host).
func listenAddr(addr string) string {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// metricsFlag is --metrics: where a process serves /metrics.
type metricsFlag struct {
	addr     string
	profiles bool     // --pprof
	hosts    []string // --metrics-host
}

func (m *metricsFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&m.addr, "metrics", "", "serve Prometheus /metrics on this address (e.g. "+metrics.DefaultAddr+
		"; a bare port means 127.0.0.1, 0.0.0.0:PORT every interface); empty: off")
	cmd.Flags().BoolVar(&m.profiles, "pprof", false, "with --metrics: also serve Go's runtime profiles at /debug/pprof/ on that address (for go tool pprof)")
	cmd.Flags().StringArrayVar(&m.hosts, "metrics-host", nil, "a host name --metrics answers to besides IP addresses, localhost and this machine's name (repeatable); any other Host is refused (DNS rebinding)")
}

// registry returns the process's metrics registry, or nil when --metrics
// is off.
// validate refuses --pprof without --metrics.
func (m *metricsFlag) validate() error {
	if m.addr == "" && m.profiles {
		return errors.New("--pprof: needs --metrics, the address the profiles are served on")
	}
	return nil
}

func (m *metricsFlag) registry() (*metrics.Registry, error) {
	if m.addr == "" {
		return nil, nil
	}
	return metrics.New(metrics.DefaultOptions())
}

// serve is the metrics server as a service; nil when off. The server
// binds before the process starts working, so a taken port fails at once.
func (m *metricsFlag) serve(ctx context.Context, reg *metrics.Registry, log *zap.Logger) (service, error) {
	if reg == nil || m.addr == "" {
		return nil, nil
	}
	opts := []metrics.ServeOption{metrics.WithAllowedHosts(m.hosts...)}
	if m.profiles {
		opts = append(opts, metrics.WithProfiles())
	}
	srv, err := metrics.Serve(ctx, listenAddr(m.addr), reg, opts...)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	log.Info("serving metrics", zap.String("url", "http://"+srv.Addr()+"/metrics"))
	return func(ctx context.Context) error {
		<-ctx.Done()
		return srv.Close()
	}, nil
}

// instrument counts the process's Redis round trips in reg.
func instrument(rdb redis.UniversalClient, reg *metrics.Registry, role metrics.Role, id int) {
	if reg != nil {
		rdb.AddHook(reg.Node(role, id).RedisHook())
	}
}

// statusPage serves the status page, and apiHandler under /api/v1/ when
// not nil, on addr as a service; nil when addr
// is empty.
// fields maps statuspage.Options fields to their flags.
func statusPage(rdb redis.UniversalClient, cf clusterFlags, addr string, hosts []string, fields fieldFlags,
	apiHandler http.Handler, log *zap.Logger) (service, error) {
	if addr == "" {
		return nil, nil
	}
	ro := statuspage.DefaultRedisOptions()
	ro.MaxSlaves = cf.maxSlaves
	src, err := statuspage.NewRedisSource(rdb, cf.keys(), ro)
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	so := statuspage.DefaultOptions()
	so.Addr, so.Logger, so.AllowedHosts, so.API = listenAddr(addr), log, hosts, apiHandler
	srv, err := statuspage.New(src, so)
	if err != nil {
		if named := fields.name(err); named != err {
			return nil, named
		}
		return nil, fmt.Errorf("--http: %w", err)
	}
	log.Info("serving the status page", zap.String("url", srv.URL()))
	return srv.Run, nil
}

// proxyFlags configure the proxy pool's validator.
type proxyFlags struct {
	sources     []string
	checkURL    string
	judgeURL    string
	judgeListen string
	min, max    int
	refill      time.Duration
	anonymity   string
	// fields maps proxy.Options fields to their flags.
	fields fieldFlags
}

func (p *proxyFlags) register(cmd *cobra.Command) {
	d := proxy.DefaultOptions()
	f, fl := cmd.Flags(), fieldFlags{}
	p.fields = fl
	f.StringArrayVar(&p.sources, fl.flag("Sources", "proxy-source"), nil, "a proxy list to validate into the pool: a file or an http(s) URL, one proxy per line (repeatable)")
	f.StringVar(&p.checkURL, fl.flag("CheckURL", "proxy-check-url"), "", "check proxies by fetching this URL through them instead of our judge")
	f.StringVar(&p.judgeURL, fl.flag("JudgeURL", "proxy-judge-url"), "", "the public URL of the judge (--proxy-judge-listen) as proxies reach it")
	f.StringVar(&p.judgeListen, "proxy-judge-listen", "", "serve the judge, which echoes what each proxy sends, on this address (a bare port means 127.0.0.1; remote proxies need 0.0.0.0:PORT or a public address)")
	f.IntVar(&p.min, fl.flag("MinSize", "proxy-min"), d.MinSize, "read the sources again while fewer proxies are usable")
	f.IntVar(&p.max, fl.flag("MaxSize", "proxy-max"), d.MaxSize, "the most proxies the pool keeps")
	f.DurationVar(&p.refill, fl.flag("RefillInterval", "proxy-refill"), d.RefillInterval, "how often the sources are read again while fewer than --proxy-min proxies are usable")
	f.StringVar(&p.anonymity, fl.flag("MinAnonymity", "proxy-anonymity"), string(d.MinAnonymity), "the least anonymity the judge must see: transparent (passes our address on), anonymous (says it is a proxy) or elite; below elite, a proxy on this host is accepted")
}

// validator returns the pool's validator as a service, and the judge it
// serves; nil when no source is given.
func (p *proxyFlags) validator(rdb redis.UniversalClient, keys cluster.Keys, reg *metrics.Registry, log *zap.Logger) (service, error) {
	if len(p.sources) == 0 {
		return nil, nil
	}
	opts := proxy.DefaultOptions()
	opts.Sources, opts.CheckURL, opts.JudgeURL = p.sources, p.checkURL, p.judgeURL
	opts.MinSize, opts.MaxSize, opts.RefillInterval, opts.Logger = p.min, p.max, p.refill, log
	opts.MinAnonymity = proxy.Anonymity(p.anonymity)
	var judge *proxy.JudgeServer
	if p.judgeListen != "" {
		j, err := proxy.ServeJudge(listenAddr(p.judgeListen))
		if err != nil {
			return nil, fmt.Errorf("--proxy-judge-listen: %w", err)
		}
		judge = j
		if opts.JudgeURL == "" {
			opts.JudgeURL = j.URL()
		}
	}
	v, err := proxy.NewValidator(rdb, keys, opts)
	if err != nil {
		if judge != nil {
			_ = judge.Close()
		}
		return nil, p.fields.name(err)
	}
	pool, err := proxy.NewPool(rdb, keys, proxy.DefaultPoolOptions())
	if err != nil {
		return nil, err
	}
	log.Info("validating proxies", zap.Int("sources", len(p.sources)), zap.String("check", v.CheckURL()))
	return func(ctx context.Context) error {
		defer func() {
			_ = v.Close()
			if judge != nil {
				_ = judge.Close()
			}
		}()
		defer runAside(ctx, func(ctx context.Context) error { countProxies(ctx, pool, reg); return nil })()
		return v.Run(ctx)
	}, nil
}

// countProxies keeps the proxies-by-state gauge up to date.
func countProxies(ctx context.Context, pool *proxy.Pool, reg *metrics.Registry) {
	if reg == nil {
		return
	}
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		if l, err := pool.List(ctx, true); err == nil {
			reg.Proxies().SetStates(stateCounts(l))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
