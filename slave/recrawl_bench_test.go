package slave

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/shopsite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// BenchmarkRecrawl_Round2: the cost per page of a second round over a shop
// of 500 products (about 8 KiB each) of which 10% changed since round 1,
// in one slave storing to MongoDB (the test server):
//
//	conditional  the default: validators sent, 450 answers are 304
//	full         conditional: false, every product downloaded and extracted again
//
// It reports the body bytes the site sent per page and the CPU (user +
// system, of the whole test process: slave, site and drivers) per page,
// for round 2 only (ns/op means nothing: the timer is stopped). Measured
// (2 shared cores, FerretDB):
//
//	go test -run XXX -bench Recrawl_Round2 -benchtime 2x ./slave/
//	conditional   807 body-bytes/page    957 cpu-µs/page
//	full         8074 body-bytes/page   1083 cpu-µs/page
//
// A tenth of the bytes; the CPU saved is small because most of it goes to
// the store and Redis, which a 304 still needs (checked_at, the ack).
func BenchmarkRecrawl_Round2(b *testing.B) {
	for _, conditional := range []bool{true, false} {
		name := "conditional"
		if !conditional {
			name = "full"
		}
		b.Run(name, func(b *testing.B) {
			var bytes, cpu time.Duration
			var pages int64
			for b.Loop() {
				b.StopTimer()
				by, c, n := recrawlRound2(b, conditional)
				b.StartTimer()
				bytes += time.Duration(by)
				cpu += c
				pages += n
			}
			b.ReportMetric(float64(bytes)/float64(pages), "body-bytes/page")
			b.ReportMetric(float64(cpu.Microseconds())/float64(pages), "cpu-µs/page")
		})
	}
}

// recrawlRound2 crawls the shop twice and returns round 2's body bytes,
// CPU time and pages.
func recrawlRound2(b *testing.B, conditional bool) (int64, time.Duration, int64) {
	const pages = 500
	rdb, keys := testenv.Redis(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	site := shopsite.New(pages, true, 0)
	srv := httptest.NewServer(site)
	defer srv.Close()
	jk := runningJob(b, ctx, rdb, keys, "shop", srv.URL)
	var spec map[string]any // the site is ours: no politeness budget to wait for
	raw, _ := rdb.Get(ctx, jk.Spec()).Bytes()
	_ = json.Unmarshal(raw, &spec)
	spec["per_host_rps"], spec["per_host_concurrency"], spec["conditional"] = 10000, 64, conditional
	raw, _ = json.Marshal(spec)
	rdb.Set(ctx, jk.Spec(), raw, 0)
	m := mongoStore(b, ctx)
	opts := DefaultOptions()
	opts.Concurrency = 16
	runSlave(b, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: m})
	queueRound(b, rdb, jk, srv.URL, 1, pages)
	waitStored(b, rdb, jk, pages)
	var changed []int
	for i := 0; i < pages; i += 10 {
		changed = append(changed, i)
	}
	site.Change(changed...)
	bytesBefore, cpuBefore := site.Bytes(), cpuTime()
	queueRound(b, rdb, jk, srv.URL, 2, pages)
	waitStored(b, rdb, jk, 2*pages)
	return site.Bytes() - bytesBefore, cpuTime() - cpuBefore, pages
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
