package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// Shapes of the kinds benchmark: the same number of stored pages, crawled
// as the two-kind job (next_link, detail_link) of the demo site, and as
// the shop's job with page kinds.
const (
	ShapeTwoKind = "two-kind"
	ShapeShop    = "shop"
)

// The benchmark's shop: 5 categories of 4 sub-categories each, the
// products shared out evenly over the 20.
const (
	kindsCategories    = 5
	kindsSubCategories = 4
	kindsSubs          = kindsCategories * kindsSubCategories
)

// KindsOptions configures the kinds benchmark: what the crawl model of
// page kinds costs per page, the demo shop crawled with its job of kinds
// beside the two-kind demo site of as many pages, by the same cluster.
type KindsOptions struct {
	// Binary is the crawler executable to start as master and slaves.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// Pages is the pages each crawl stores: the shop's products and the
	// two-kind site's detail pages. It is rounded up to a multiple of the
	// shop's 20 sub-categories.
	Pages int
	// Slaves is the cluster's slaves, besides its one master.
	Slaves int
	// Concurrency is each slave's --concurrency.
	Concurrency int
	// PerPage is the links to items on each list page of both sites.
	PerPage int
	// Rounds is how many times each shape is crawled, the shapes taking
	// turns, so that a busy spell of the machine does not fall on one.
	Rounds int
	// Tap counts each process's commands and round trips on the wire.
	Tap bool
	// Timeout bounds one crawl.
	Timeout time.Duration

	scripts *scriptNames
}

// DefaultKindsOptions are the kinds benchmark's defaults: 4,000 pages, 1
// master and 2 slaves, 3 rounds.
func DefaultKindsOptions() KindsOptions {
	return KindsOptions{RedisURL: "redis://127.0.0.1:6379/0", Pages: 4000, Slaves: 2, Concurrency: 32, PerPage: 25, Rounds: 3,
		Tap: true, Timeout: 10 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o KindsOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench kinds: no crawler binary")
	case o.Pages < 1 || o.Pages > 1_000_000:
		return cluster.Invalid("Pages", o.Pages, "is outside 1..1000000")
	case o.Slaves < 1 || o.Slaves > cluster.DefaultMaxSlaves:
		return cluster.Invalid("Slaves", o.Slaves, "is outside 1..%d", cluster.DefaultMaxSlaves)
	case o.Concurrency < 1 || o.Concurrency > 10_000:
		return cluster.Invalid("Concurrency", o.Concurrency, "is outside 1..10000")
	case o.PerPage < 1 || o.PerPage > 10_000:
		return cluster.Invalid("PerPage", o.PerPage, "is outside 1..10000")
	case o.Rounds < 1 || o.Rounds > 100:
		return cluster.Invalid("Rounds", o.Rounds, "is outside 1..100")
	case o.Timeout <= 0:
		return cluster.Invalid("Timeout", o.Timeout, "must be positive")
	}
	return nil
}

// pages is the pages each crawl stores: Pages rounded up to a multiple of
// the shop's sub-categories.
func (o KindsOptions) pages() int { return (o.Pages + kindsSubs - 1) / kindsSubs * kindsSubs }

// Args are the `crawler-bench kinds` flags that reproduce o (Redis aside).
func (o KindsOptions) Args() []string {
	args := []string{"--pages", strconv.Itoa(o.Pages), "--slaves", strconv.Itoa(o.Slaves),
		"--concurrency", strconv.Itoa(o.Concurrency), "--per-page", strconv.Itoa(o.PerPage),
		"--rounds", strconv.Itoa(o.Rounds)}
	if !o.Tap {
		args = append(args, "--tap=false")
	}
	return args
}

// crawlOptions are the crawl benchmark's options of one of o's crawls.
func (o KindsOptions) crawlOptions() CrawlOptions {
	c := DefaultCrawlOptions()
	c.Binary, c.RedisURL, c.Concurrency, c.Tap, c.Timeout, c.scripts = o.Binary, o.RedisURL, o.Concurrency, o.Tap, o.Timeout, o.scripts
	return c
}

// KindsRun is one crawl of the kinds benchmark.
type KindsRun struct {
	// Shape is ShapeTwoKind or ShapeShop.
	Shape string
	// Round counts from 1.
	Round int
	// Requests is how many requests the site answered, robots.txt
	// included.
	Requests int64
	// Expected is the items a correct crawl stores.
	Expected int
	CrawlResult
}

// KindsReport is the kinds benchmark's runs, the shapes taking turns.
type KindsReport struct {
	Opts KindsOptions
	Runs []KindsRun
}

// Kinds crawls the two-kind demo site and the shop, of as many pages,
// Rounds times each, taking turns, on a fresh cluster of 1 master and
// opts.Slaves slaves each time.
func Kinds(ctx context.Context, opts KindsOptions) (KindsReport, error) {
	rep := KindsReport{Opts: opts}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	if opts.scripts == nil {
		opts.scripts = newScriptNames()
	}
	for round := 1; round <= opts.Rounds; round++ {
		for _, shape := range []string{ShapeTwoKind, ShapeShop} {
			run, err := kindsOnce(ctx, opts, shape)
			run.Shape, run.Round = shape, round
			if err != nil {
				return rep, fmt.Errorf("%s crawl, round %d: %w", shape, round, err)
			}
			if run.Pages != int64(run.Expected) {
				return rep, fmt.Errorf("%s crawl, round %d: %d pages stored, want %d", shape, round, run.Pages, run.Expected)
			}
			rep.Runs = append(rep.Runs, run)
		}
	}
	return rep, nil
}

// kindsOnce serves the site of shape on 127.0.0.1 and crawls it.
func kindsOnce(ctx context.Context, opts KindsOptions, shape string) (KindsRun, error) {
	pages := opts.pages()
	var handler http.Handler
	var job func(base string) (string, error)
	switch shape {
	case ShapeTwoKind:
		handler = demosite.New(demosite.Options{Details: pages, PerPage: opts.PerPage, GoneEvery: -1, FlakyEvery: -1})
		job = func(base string) (string, error) {
			return demosite.Job{Name: shape, Seeds: []string{base + "/list/1"}, AllowedDomains: []string{"127.0.0.1"},
				PerHostRPS: jobspec.MaxPerHostRPS, PerHostConcurrency: jobspec.MaxPerHostInFlight,
				Capacity: max(100_000, 2*int64(pages))}.YAML(), nil
		}
	default:
		handler = demosite.NewShop(demosite.ShopOptions{Categories: kindsCategories, SubCategories: kindsSubCategories,
			Products: pages / kindsSubs, PerPage: opts.PerPage})
		job = func(base string) (string, error) { return shopBenchJob(shape, base, pages) }
	}
	srv, err := serveCounting(handler)
	if err != nil {
		return KindsRun{}, err
	}
	defer srv.close()
	yaml, err := job(srv.base)
	if err != nil {
		return KindsRun{}, err
	}
	res, err := crawlJob(ctx, opts.crawlOptions(), opts.Slaves, shape, yaml)
	res.Label = shape
	return KindsRun{Requests: srv.requests.Load(), Expected: pages, CrawlResult: res}, err
}

// shopBenchJob is the demo shop's job (without its sitemaps, which only
// add duplicates), with the politeness budget and dupefilter of the
// two-kind crawl's, so that the two differ in their crawl model alone.
func shopBenchJob(name, base string, pages int) (string, error) {
	yaml := demosite.ShopJobYAML(name, base, false)
	for _, r := range [][2]string{
		{"per_host_rps: 1000\n", fmt.Sprintf("per_host_rps: %d\n", jobspec.MaxPerHostRPS)},
		{"per_host_concurrency: 32\n", fmt.Sprintf("per_host_concurrency: %d\n", jobspec.MaxPerHostInFlight)},
		{"capacity: 100000,", fmt.Sprintf("capacity: %d,", max(100_000, 2*pages))},
	} {
		if !strings.Contains(yaml, r[0]) {
			return "", fmt.Errorf("the shop's job has no %q to set", strings.TrimSpace(r[0]))
		}
		yaml = strings.Replace(yaml, r[0], r[1], 1)
	}
	return yaml, nil
}

// countingServer serves a handler on 127.0.0.1 and counts its requests.
type countingServer struct {
	srv      *http.Server
	base     string
	requests atomic.Int64
	done     chan struct{}
}

func serveCounting(h http.Handler) (*countingServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve the site: %w", err)
	}
	s := &countingServer{base: "http://" + ln.Addr().String(), done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h.ServeHTTP(w, r)
	})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *countingServer) close() {
	_ = s.srv.Close()
	<-s.done
}
