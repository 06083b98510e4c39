package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// ProxyOptions configures ProxyPool.
type ProxyOptions struct {
	// PoolSizes are the pool sizes the selection is measured at.
	// Default 10 and 1000.
	PoolSizes []int
	// Requests is the Pick+Report pairs per pool size. Default 20000.
	Requests int
	// Workers is how many goroutines pick and report at once. Default 16.
	Workers int
	// Candidates is how many loopback proxies are validated. Default 200.
	Candidates int
	// Concurrency is the validator's checks in flight. Default 64.
	Concurrency int
}

// DefaultProxyOptions returns the defaults.
func DefaultProxyOptions() ProxyOptions {
	return ProxyOptions{PoolSizes: []int{10, 1000}, Requests: 20000, Workers: 16, Candidates: 200, Concurrency: 64}
}

// Validate names the first option out of range.
func (o ProxyOptions) Validate() error {
	switch {
	case len(o.PoolSizes) == 0:
		return cluster.Invalid("PoolSizes", o.PoolSizes, "is empty")
	case o.Requests < 1:
		return cluster.Invalid("Requests", o.Requests, "is below 1")
	case o.Workers < 1:
		return cluster.Invalid("Workers", o.Workers, "is below 1")
	case o.Candidates < 1 || o.Candidates > 5000:
		return cluster.Invalid("Candidates", o.Candidates, "is outside 1..5000")
	case o.Concurrency < 1:
		return cluster.Invalid("Concurrency", o.Concurrency, "is below 1")
	}
	for _, n := range o.PoolSizes {
		if n < 1 {
			return cluster.Invalid("PoolSizes", n, "is below 1")
		}
	}
	return nil
}

// ProxySelectionRow is the cost of Pick+Report at one pool size.
type ProxySelectionRow struct {
	Pool, Workers, Requests int
	Wall                    time.Duration
	// RoundTrips counts the commands sent per request (pick + report).
	RoundTrips float64
	// RedisCPU is the Redis server's CPU time per request, when INFO
	// tells it (not on miniredis).
	RedisCPU time.Duration
}

// PerRequest is the wall time per request across all workers.
func (r ProxySelectionRow) PerRequest() time.Duration { return r.Wall / time.Duration(r.Requests) }

// PerSecond is the requests per second.
func (r ProxySelectionRow) PerSecond() float64 { return float64(r.Requests) / r.Wall.Seconds() }

// ProxyValidationRow is the validator's throughput.
type ProxyValidationRow struct {
	Candidates, Concurrency, Passed int
	Wall                            time.Duration
}

// PerSecond is the candidates validated per second.
func (r ProxyValidationRow) PerSecond() float64 { return float64(r.Candidates) / r.Wall.Seconds() }

// ProxyReport is what `crawler-bench proxy` prints.
type ProxyReport struct {
	Selection  []ProxySelectionRow
	Validation ProxyValidationRow
}

// ProxyPool measures the pool on rdb, under a scratch prefix below keys that
// it deletes afterwards: Pick+Report per request at each pool size, and
// the validator's candidates per second against loopback HTTP proxies
// (goproxy) and a loopback judge. It adds a hook counting commands to rdb.
func ProxyPool(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, o ProxyOptions) (*ProxyReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	calls := &callCounter{}
	rdb.AddHook(calls)
	rep := &ProxyReport{}
	for _, n := range o.PoolSizes {
		row, err := benchScratch(ctx, rdb, keys, func(k cluster.Keys) (ProxySelectionRow, error) {
			return benchSelection(ctx, rdb, k, calls, n, o)
		})
		if err != nil {
			return nil, err
		}
		rep.Selection = append(rep.Selection, row)
	}
	v, err := benchScratch(ctx, rdb, keys, func(k cluster.Keys) (ProxyValidationRow, error) {
		return benchValidation(ctx, rdb, k, o)
	})
	rep.Validation = v
	return rep, err
}

// benchScratch runs f under a scratch prefix and deletes its keys.
func benchScratch[T any](ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, f func(cluster.Keys) (T, error)) (T, error) {
	prefix := keys.Prefix
	if prefix == "" {
		prefix = cluster.DefaultPrefix
	}
	k := cluster.Keys{Prefix: prefix + ":bench:" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	defer deleteTag(context.WithoutCancel(ctx), rdb, k.Proxies().Tag())
	return f(k)
}

func deleteTag(ctx context.Context, rdb redis.UniversalClient, tag string) {
	iter := rdb.Scan(ctx, 0, strings.NewReplacer("{", `\{`, "}", `\}`).Replace(tag)+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rdb.Unlink(ctx, iter.Val())
	}
}

func benchSelection(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, calls *callCounter, n int, o ProxyOptions) (ProxySelectionRow, error) {
	if err := seedBench(ctx, rdb, keys, n); err != nil {
		return ProxySelectionRow{}, err
	}
	pool, err := proxy.NewPool(rdb, keys, proxy.DefaultPoolOptions())
	if err != nil {
		return ProxySelectionRow{}, err
	}
	target, _ := url.Parse("https://bench.example/page")
	cpu0 := redisCPU(ctx, rdb)
	calls.n.Store(0)
	start := time.Now()
	err = runWorkers(o.Workers, o.Requests, func() error {
		p, err := pool.Pick(ctx, target, nil)
		if err != nil {
			return err
		}
		return pool.Report(ctx, p, proxy.Success(50*time.Millisecond))
	})
	row := ProxySelectionRow{Pool: n, Workers: o.Workers, Requests: o.Requests, Wall: time.Since(start),
		RoundTrips: float64(calls.n.Load()) / float64(o.Requests)}
	if cpu1 := redisCPU(ctx, rdb); cpu0 >= 0 && cpu1 >= 0 {
		row.RedisCPU = (cpu1 - cpu0) / time.Duration(o.Requests)
	}
	return row, err
}

// seedBench fills the pool with n synthetic proxies (never contacted),
// each allowed more requests in flight than the workers.
func seedBench(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, n int) error {
	vo := proxy.DefaultOptions()
	vo.CheckURL, vo.MaxSize, vo.MinSize, vo.ProxyConcurrency = "http://127.0.0.1:9/", n, 0, 1000
	v, err := proxy.NewValidator(rdb, keys, vo)
	if err != nil {
		return err
	}
	seeds := make([]proxy.Seeded, n)
	for i := range seeds {
		p, _ := proxy.Parse(fmt.Sprintf("http://u%d:p@10.%d.%d.%d:3128", i, i>>16&255, i>>8&255, i&255))
		seeds[i] = proxy.Seeded{Proxy: p, Latency: time.Duration(20+i%200) * time.Millisecond, Tunnel: true}
	}
	return v.Seed(ctx, seeds)
}

// runWorkers runs total calls of f on workers goroutines; the first error
// stops them.
func runWorkers(workers, total int, f func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) && errs[w] == nil {
				errs[w] = f()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func benchValidation(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, o ProxyOptions) (ProxyValidationRow, error) {
	var lines []string
	for range o.Candidates {
		s, err := proxytest.NewHTTP()
		if err != nil {
			return ProxyValidationRow{}, err
		}
		defer s.Close()
		lines = append(lines, s.Line())
	}
	list, err := os.CreateTemp("", "bench-proxies-*.txt")
	if err != nil {
		return ProxyValidationRow{}, err
	}
	defer os.Remove(list.Name())
	_, err = list.WriteString(strings.Join(lines, "\n") + "\n")
	if err := errors.Join(err, list.Close()); err != nil {
		return ProxyValidationRow{}, err
	}
	vo := proxy.DefaultOptions()
	vo.Concurrency, vo.MaxSize, vo.MinSize, vo.Sources = o.Concurrency, o.Candidates, 0, []string{list.Name()}
	v, err := proxy.NewValidator(rdb, keys, vo)
	if err != nil {
		return ProxyValidationRow{}, err
	}
	defer v.Close()
	start := time.Now() // the round reads the list, admits its proxies and checks them
	r, err := v.Round(ctx)
	return ProxyValidationRow{Candidates: r.Checked, Concurrency: o.Concurrency, Passed: r.Passed,
		Wall: time.Since(start)}, err
}

// WriteTable prints the report as two tables.
func (r *ProxyReport) WriteTable(w io.Writer) error {
	fmt.Fprintln(w, "proxy selection + feedback (one Pick + one Report per request)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pool\tworkers\trequests\treq/s\tµs/request\tround trips/request\tRedis CPU µs/request*\t")
	for _, s := range r.Selection {
		cpu := "n/a"
		if s.RedisCPU > 0 {
			cpu = strconv.FormatFloat(float64(s.RedisCPU)/float64(time.Microsecond), 'f', 1, 64)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.1f\t%.2f\t%s\t\n", s.Pool, s.Workers, s.Requests, s.PerSecond(),
			float64(s.PerRequest())/float64(time.Microsecond), s.RoundTrips, cpu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "* the whole server's CPU (INFO cpu) over the run, divided by the requests")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "proxy validation (loopback goproxy proxies, loopback judge; GET + CONNECT each)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	v := r.Validation
	fmt.Fprintln(tw, "candidates\tconcurrency\tpassed\tseconds\tcandidates/s\t")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%.2f\t%.0f\t\n", v.Candidates, v.Concurrency, v.Passed, v.Wall.Seconds(), v.PerSecond())
	return tw.Flush()
}

// redisCPU is the server's used CPU (user + system), or -1 if INFO does
// not say.
func redisCPU(ctx context.Context, rdb redis.UniversalClient) time.Duration {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return -1
	}
	var total float64
	found := 0
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
			found++
		}
	}
	if found != 2 {
		return -1
	}
	return time.Duration(total * float64(time.Second))
}

// callCounter counts the commands sent, pipelined ones included.
type callCounter struct{ n atomic.Int64 }

func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}
