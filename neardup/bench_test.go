package neardup_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/redisserver"
	"github.com/crawler-dev/crawler/neardup"
)

// BenchmarkIndex_FindOrAdd offers 20,000 pages (a tenth of them
// near-duplicates of an earlier page, ids of 38 bytes) to an index that
// already holds held pages, in calls of batch pages (a slave sends what
// it stored in 10 ms, up to 256: 12-40 pages in crawler bench crawl),
// from callers processes' indexes at once (each its own mirror of the
// logs, as slaves have; the batches dealt out in turn), on a redis-server
// of the benchmark's own, so that INFO counts its traffic alone. One op is
// the 20,000 pages; each op starts from a fresh index. The held pages were
// added in two halves half a window apart, the first in the window before
// the current one, as in a crawl that runs for longer than its window.
// Besides ns/op it reports, per page offered: script-µs/page, the time
// Redis spent in the script (INFO commandstats usec of EVALSHA and EVAL,
// the commands it ran included; wall time, so it grows when the machine
// is busy); redis-cpu-µs/page, the CPU time Redis used (INFO
// used_cpu_user and _sys: scripts, network, the benchmark's INFO
// included); cmds/page, the commands the script ran; calls/batch, the
// script calls per batch (above 1 when another caller appended first and
// the batch was decided again); B/entry, Redis's used_memory grown by the
// held pages, per entry the index holds; and mirror-B/entry, the Go heap
// of a process's mirror of them, per entry.
//
//	go test -run '^$' -bench FindOrAdd -benchtime 2x ./neardup/
func BenchmarkIndex_FindOrAdd(b *testing.B) {
	for _, c := range []struct{ batch, held, callers int }{
		{1, 20_000, 1}, {10, 20_000, 1}, {100, 20_000, 1}, {256, 20_000, 1}, {256, 200_000, 1}, {40, 20_000, 4},
	} {
		b.Run(fmt.Sprintf("batch=%d/held=%d/callers=%d", c.batch, c.held, c.callers), func(b *testing.B) {
			const pages = 20_000
			rdb := privateRedis(b)
			var script commandStat
			var calls int64
			var cpu float64
			var perEntry, mirrorPerEntry float64
			for b.Loop() {
				b.StopTimer()
				x, src, bytes, held := heldIndex(b, rdb, c.held)
				perEntry = bytes / float64(held)
				mirrorPerEntry = mirrorBytes(b, rdb, x, src) / float64(held)
				callers := mirrors(b, rdb, x, src, c.callers)
				batches := deal(src, pages, c.batch, c.callers)
				before, cpu0 := commandStats(b, rdb), redisCPU(b, rdb)
				b.StartTimer()
				var wg sync.WaitGroup
				for k, x := range callers {
					wg.Go(func() {
						for _, entries := range batches[k] {
							offer(b, x, entries)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				after := commandStats(b, rdb)
				cpu += redisCPU(b, rdb) - cpu0
				script = script.add(after["evalsha"].sub(before["evalsha"])).add(after["eval"].sub(before["eval"]))
				calls += innerCalls(after) - innerCalls(before)
				b.StartTimer()
			}
			n := float64(b.N * pages)
			b.ReportMetric(float64(script.usec)/n, "script-µs/page")
			b.ReportMetric(cpu/n*1e6, "redis-cpu-µs/page")
			b.ReportMetric(float64(calls)/n, "cmds/page")
			b.ReportMetric(float64(script.calls)/float64(b.N*((pages+c.batch-1)/c.batch)), "calls/batch")
			b.ReportMetric(perEntry, "B/entry")
			b.ReportMetric(mirrorPerEntry, "mirror-B/entry")
			b.ReportMetric(b.Elapsed().Seconds()/n*1e6, "µs/page")
		})
	}
}

// mirrors returns x and n-1 more indexes over its keys, each with its
// mirror read (by offering one page of src), as slaves that have been
// running for a while have.
func mirrors(b *testing.B, rdb *redis.Client, x *neardup.Index, src *pageSource, n int) []*neardup.Index {
	out := []*neardup.Index{x}
	for len(out) < n {
		y, err := neardup.New(rdb, x.Options())
		if err != nil {
			b.Fatal(err)
		}
		offer(b, y, src.next(1))
		out = append(out, y)
	}
	return out
}

// mirrorBytes is the Go heap a process's index takes once it has read the
// logs of x (by offering one page of src).
func mirrorBytes(b *testing.B, rdb *redis.Client, x *neardup.Index, src *pageSource) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	y, err := neardup.New(rdb, x.Options())
	if err != nil {
		b.Fatal(err)
	}
	offer(b, y, src.next(1))
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(y)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// deal makes the batches of pages pages from src and deals them out to n
// callers in turn.
func deal(src *pageSource, pages, batch, n int) [][][]neardup.Entry {
	out := make([][][]neardup.Entry, n)
	for k := 0; pages > 0; k = (k + 1) % n {
		m := min(batch, pages)
		out[k] = append(out[k], src.next(m))
		pages -= m
	}
	return out
}

// heldIndex empties Redis and returns an index holding the entries of n
// pages, the source of the pages to offer next, Redis's used_memory grown
// by them and the number of entries.
func heldIndex(b *testing.B, rdb *redis.Client, n int) (*neardup.Index, *pageSource, float64, int) {
	ctx := context.Background()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	const window = time.Hour
	now := time.Now().Truncate(window).Add(window * 3 / 4)
	opts := neardup.DefaultOptions("{crawler:job:bench}:simhash", window)
	opts.Now = func() time.Time { return now }
	x, err := neardup.New(rdb, opts)
	if err != nil {
		b.Fatal(err)
	}
	src := newPageSource()
	mem := infoField(b, rdb, "memory", "used_memory")
	held := 0
	for i := range n / neardup.MaxBatch {
		if i == n/neardup.MaxBatch/2 {
			now = now.Add(window / 2)
		}
		held += offer(b, x, src.next(neardup.MaxBatch))
	}
	return x, src, infoField(b, rdb, "memory", "used_memory") - mem, held
}

// offer offers entries and returns how many were added.
func offer(b *testing.B, x *neardup.Index, entries []neardup.Entry) int {
	res, err := x.FindOrAdd(context.Background(), entries)
	if err != nil {
		b.Fatal(err)
	}
	added := 0
	for _, r := range res {
		if !r.Duplicate() {
			added++
		}
	}
	return added
}

// privateRedis starts a redis-server of the benchmark's own on a free
// loopback port, keeping nothing on disk, and stops it when b ends.
func privateRedis(b *testing.B) *redis.Client {
	s, err := redisserver.Start(context.Background(), redisserver.Options{})
	if err != nil {
		b.Fatalf("start a redis-server of the benchmark's own (apt-get install redis-server): %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	rdb := redis.NewClient(s.Options())
	b.Cleanup(func() { rdb.Close() })
	return rdb
}

// pageSource makes pages with random hashes, every tenth one bit away
// from an earlier page, and ids of 38 to 39 bytes.
type pageSource struct {
	rng    *rand.Rand
	hashes []uint64
}

func newPageSource() *pageSource { return &pageSource{rng: rand.New(rand.NewPCG(11, 12))} }

func (p *pageSource) next(n int) []neardup.Entry {
	out := make([]neardup.Entry, n)
	for i := range out {
		h := p.rng.Uint64()
		if len(p.hashes)%10 == 9 {
			h = p.hashes[p.rng.IntN(len(p.hashes))] ^ 1<<p.rng.IntN(64)
		}
		out[i] = neardup.Entry{ID: "https://news.example.com/article/" + strconv.Itoa(len(p.hashes)), Hash: h}
		p.hashes = append(p.hashes, h)
	}
	return out
}

// commandStat is one line of INFO commandstats.
type commandStat struct{ calls, usec int64 }

func (c commandStat) sub(o commandStat) commandStat {
	return commandStat{c.calls - o.calls, c.usec - o.usec}
}

func (c commandStat) add(o commandStat) commandStat {
	return commandStat{c.calls + o.calls, c.usec + o.usec}
}

// commandStats reads INFO commandstats by command name.
func commandStats(b *testing.B, rdb *redis.Client) map[string]commandStat {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]commandStat{}
	for _, line := range strings.Split(info, "\n") {
		name, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var c commandStat
		for _, kv := range strings.Split(val, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				c.calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				c.usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = c
	}
	return out
}

// innerCalls counts the calls of every command but the client's own
// (scripts, INFO, the connection's handshake).
func innerCalls(stats map[string]commandStat) int64 {
	var n int64
	for name, c := range stats {
		switch {
		case name == "evalsha", name == "eval", name == "info", name == "ping", name == "hello",
			strings.HasPrefix(name, "client|"), strings.HasPrefix(name, "script|"):
		default:
			n += c.calls
		}
	}
	return n
}

// redisCPU is the CPU time Redis has used, in seconds.
func redisCPU(b *testing.B, rdb *redis.Client) float64 {
	return infoField(b, rdb, "cpu", "used_cpu_user") + infoField(b, rdb, "cpu", "used_cpu_sys")
}

// infoField reads one numeric field of an INFO section.
func infoField(b *testing.B, rdb *redis.Client, section, field string) float64 {
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			return f
		}
	}
	b.Fatalf("INFO %s has no %s", section, field)
	return 0
}
