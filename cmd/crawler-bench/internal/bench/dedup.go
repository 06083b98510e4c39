package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/dedup"
)

// DedupOptions configure the dupefilter comparison.
type DedupOptions struct {
	// N is how many fingerprints each mode inserts (default 1,000,000).
	N int
	// Batch is the fingerprints per script call (default 1000).
	Batch int
	// Duration caps each throughput-only run (default 10s).
	Duration time.Duration
	// ScrapyN is how many URLs the scrapy-redis-bloomfilter method checks,
	// one round trip per bit (default 20,000; capped by Duration).
	ScrapyN int
	// Window, Granularity and ErrorRate size the bloom filter (defaults
	// 168h, 24h, 0.001); its per-slice capacity is N.
	Window, Granularity time.Duration
	ErrorRate           float64
}

func (o *DedupOptions) defaults() {
	o.N = cmp.Or(o.N, 1_000_000)
	o.Batch = cmp.Or(o.Batch, 1000)
	o.Duration = cmp.Or(o.Duration, 10*time.Second)
	o.ScrapyN = cmp.Or(o.ScrapyN, 20_000)
	o.Window = cmp.Or(o.Window, 168*time.Hour)
	o.Granularity = cmp.Or(o.Granularity, 24*time.Hour)
	o.ErrorRate = cmp.Or(o.ErrorRate, 0.001)
}

// Validate checks the options, naming the bad one.
func (o DedupOptions) Validate() error {
	switch {
	case o.N < 1:
		return fmt.Errorf("n %d: must be positive", o.N)
	case o.Batch < 1 || o.Batch > dedup.MaxChunk:
		return fmt.Errorf("batch %d: must be in [1, %d]", o.Batch, dedup.MaxChunk)
	case o.Duration <= 0:
		return fmt.Errorf("duration %v: must be positive", o.Duration)
	}
	return nil
}

// DedupRate is one method's throughput row.
type DedupRate struct {
	Method       string
	Checks       int
	ChecksPerSec float64
	Note         string
}

// DedupMemory is one mode's memory row.
type DedupMemory struct {
	Mode        dedup.Mode
	BytesPerFP  float64
	BitsPerElem float64
}

// DedupReport is the whole comparison.
type DedupReport struct {
	Opts                 DedupOptions
	Sizing               dedup.Sizing // the bloom slices' layout
	Slices               int          // L+1 live bloom slices
	SliceErr             float64      // configured ε per slice
	AchievedErr          float64      // ε of a full slice with the real m, n, k
	K                    int
	OptimumBitsPerElem   float64 // Bloom optimum for SliceErr
	AchievedOptimumBits  float64 // Bloom optimum for AchievedErr
	TotalOptimumBitsElem float64 // Bloom optimum for the total ε, for reference
	Rates                []DedupRate
	Memory               []DedupMemory
}

// Dedup measures, on rdb, the batched Lua check-and-insert in each mode, the
// scrapy-redis-bloomfilter method, and Redis memory per fingerprint. Keys
// live under a random prefix and are deleted afterwards.
func Dedup(ctx context.Context, rdb redis.UniversalClient, opts DedupOptions) (DedupReport, error) {
	opts.defaults()
	if err := opts.Validate(); err != nil {
		return DedupReport{}, err
	}
	r := dedupRun{rdb: rdb, opts: opts, prefix: randomPrefix(), fps: benchFPs(opts.N)}
	defer r.cleanup(context.WithoutCancel(ctx))
	return r.run(ctx)
}

type dedupRun struct {
	rdb    redis.UniversalClient
	opts   DedupOptions
	prefix string
	fps    []canon.Fingerprint
	phase  int
}

func (r *dedupRun) run(ctx context.Context) (DedupReport, error) {
	rep, err := r.header()
	if err != nil {
		return rep, err
	}
	for _, m := range []dedup.Mode{dedup.ModeBloom, dedup.ModeExact, dedup.ModeSet} {
		rate, mem, err := r.insertAll(ctx, m)
		if err != nil {
			return rep, err
		}
		rep.Rates, rep.Memory = append(rep.Rates, rate), append(rep.Memory, mem)
	}
	full, err := r.fullSlices(ctx, 0)
	if err != nil {
		return rep, err
	}
	cached, err := r.fullSlices(ctx, dedup.DefaultCacheBytes)
	if err != nil {
		return rep, err
	}
	scrapy, err := r.scrapyMethod(ctx)
	if err != nil {
		return rep, err
	}
	rep.Rates = append(rep.Rates[:1], append([]DedupRate{full, cached, scrapy}, rep.Rates[1:]...)...)
	return rep, nil
}

func (r *dedupRun) header() (DedupReport, error) {
	o := r.opts
	f, _, err := r.filter(dedup.ModeBloom)
	if err != nil {
		return DedupReport{}, err
	}
	sz := f.Sizing()
	perElem := func(eps float64) float64 { return float64(dedup.OptimalBits(int64(o.N), eps)) / float64(o.N) }
	return DedupReport{Opts: o, Sizing: sz, Slices: sz.Slices, SliceErr: sz.SliceErrorRate,
		AchievedErr: sz.ExpectedSliceErrorRate, K: sz.K,
		OptimumBitsPerElem:   perElem(sz.SliceErrorRate),
		AchievedOptimumBits:  perElem(sz.ExpectedSliceErrorRate),
		TotalOptimumBitsElem: perElem(o.ErrorRate)}, nil
}

// filter returns a filter of mode m under a namespace of its own.
func (r *dedupRun) filter(m dedup.Mode) (*dedup.Filter, string, error) {
	return r.cachedFilter(m, 0)
}

// cachedFilter is filter with Options.CacheBytes = cache.
func (r *dedupRun) cachedFilter(m dedup.Mode, cache int64) (*dedup.Filter, string, error) {
	r.phase++
	ns := "{" + r.prefix + ":" + strconv.Itoa(r.phase) + "}:dedup"
	f, err := dedup.New(r.rdb, dedup.Options{Mode: m, Namespace: ns, Window: r.opts.Window,
		Granularity: r.opts.Granularity, Capacity: int64(r.opts.N), ErrorRate: r.opts.ErrorRate, CacheBytes: cache})
	return f, ns, err
}

// insertAll inserts every fingerprint in mode m, timing it and measuring
// the growth of Redis's used_memory.
func (r *dedupRun) insertAll(ctx context.Context, m dedup.Mode) (DedupRate, DedupMemory, error) {
	if err := r.warmUp(ctx, m); err != nil {
		return DedupRate{}, DedupMemory{}, err
	}
	f, _, err := r.filter(m)
	if err != nil {
		return DedupRate{}, DedupMemory{}, err
	}
	before, err := usedMemory(ctx, r.rdb)
	if err != nil {
		return DedupRate{}, DedupMemory{}, err
	}
	start := time.Now()
	if err := r.seenAll(ctx, f, r.fps); err != nil {
		return DedupRate{}, DedupMemory{}, err
	}
	elapsed := time.Since(start)
	after, err := usedMemory(ctx, r.rdb)
	perFP := float64(after-before) / float64(len(r.fps))
	rate := DedupRate{Method: "(" + modeLetter(m) + ") " + string(m) + " mode, batched Lua",
		Checks: len(r.fps), ChecksPerSec: float64(len(r.fps)) / elapsed.Seconds(), Note: modeNote(m)}
	return rate, DedupMemory{Mode: m, BytesPerFP: perFP, BitsPerElem: 8 * perFP}, err
}

// warmUp runs one batch in mode m on a throwaway namespace and deletes it,
// so the script cache and the connection's buffers are not counted as
// fingerprint memory.
func (r *dedupRun) warmUp(ctx context.Context, m dedup.Mode) error {
	f, ns, err := r.filter(m)
	if err != nil {
		return err
	}
	if err := r.seenAll(ctx, f, r.fps[:min(r.opts.Batch, len(r.fps))]); err != nil {
		return err
	}
	r.deleteKeys(ctx, ns)
	return nil
}

func (r *dedupRun) seenAll(ctx context.Context, f *dedup.Filter, fps []canon.Fingerprint) error {
	for i := 0; i < len(fps); i += r.opts.Batch {
		if _, err := f.SeenBatch(ctx, fps[i:min(i+r.opts.Batch, len(fps))]); err != nil {
			return err
		}
	}
	return nil
}

func modeLetter(m dedup.Mode) string {
	return map[dedup.Mode]string{dedup.ModeBloom: "a", dedup.ModeExact: "d", dedup.ModeSet: "c"}[m]
}

func modeNote(m dedup.Mode) string {
	switch m {
	case dedup.ModeBloom:
		return "fresh filter: only the current slice exists"
	case dedup.ModeExact:
		return "ZSET of 16-byte fingerprints scored by expiry"
	default:
		return "scrapy-redis SET of 40-hex SHA1s, no expiry"
	}
}

func usedMemory(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("bench dedup: redis info: %w", err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("bench dedup: no used_memory in INFO memory")
}

func (r *dedupRun) cleanup(ctx context.Context) { r.deleteKeys(ctx, r.prefix) }

// deleteKeys deletes (synchronously, so memory readings settle) every key
// containing stem.
func (r *dedupRun) deleteKeys(ctx context.Context, stem string) {
	iter := r.rdb.Scan(ctx, 0, "*"+stem+"*", 1000).Iterator()
	for iter.Next(ctx) {
		r.rdb.Del(ctx, iter.Val())
	}
}

func randomPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "bench-dedup-" + hex.EncodeToString(b[:])
}

// benchFPs returns n distinct URL fingerprints, computed before any timing.
func benchFPs(n int) []canon.Fingerprint {
	out := make([]canon.Fingerprint, n)
	for i := range out {
		out[i] = canon.RequestFingerprint("GET", "https://news.example.com/item?id="+strconv.Itoa(i), nil)
	}
	return out
}

// Args are the `crawler-bench dedup` flags that reproduce o (Redis aside).
func (o DedupOptions) Args() []string {
	o.defaults()
	return []string{"--n", strconv.Itoa(o.N), "--batch", strconv.Itoa(o.Batch), "--duration", o.Duration.String()}
}

// WriteDedup prints the report's tables in format f.
func WriteDedup(w io.Writer, f Format, rep DedupReport) error {
	return WriteTables(w, f, DedupTables(rep)...)
}

// DedupTables are the dupefilter comparison's tables: checks per second
// by method, then Redis memory per fingerprint by mode.
func DedupTables(rep DedupReport) []Table {
	o, sz := rep.Opts, rep.Sizing
	rates := Table{
		Caption: fmt.Sprintf("Dupefilter on one Redis: n=%d fingerprints, batch=%d, window=%v, granularity=%v -> %d live slices.",
			o.N, o.Batch, o.Window, o.Granularity, rep.Slices),
		Header: []string{"method", "checks", "checks/s", "vs (b)", "note"},
		Notes: []string{
			fmt.Sprintf("total ε=%g, per-slice ε=%.3g (ε/%d) configured, %.3g achieved at capacity.", o.ErrorRate, rep.SliceErr, rep.Slices, rep.AchievedErr),
			fmt.Sprintf("slice: blocked Bloom, m=%d bits (%.2f/fp) in %d string(s) of %d bytes, %d-bit lines, k=%d.",
				sz.Bits, float64(sz.Bits)/float64(o.N), sz.Blocks, sz.BlockBytes, sz.LineBits, rep.K),
			fmt.Sprintf("Runs that only measure speed ((a'), (a'') and (b)) stop after %v.", o.Duration),
		},
	}
	base := scrapyRate(rep.Rates)
	for _, r := range rep.Rates {
		rates.AddRow(r.Method, strconv.Itoa(r.Checks), fmt.Sprintf("%.0f", r.ChecksPerSec), fmt.Sprintf("%.1fx", r.ChecksPerSec/base), r.Note)
	}
	mem := Table{
		Caption: fmt.Sprintf("Redis memory after inserting %d fingerprints (INFO used_memory delta).", o.N),
		Header:  []string{"mode", "bytes/fp", "bits/fp", "vs optimum at configured slice ε", "vs optimum at achieved slice ε"},
	}
	ratio := func(bits float64) []string {
		return []string{fmt.Sprintf("%.2fx", bits/rep.OptimumBitsPerElem), fmt.Sprintf("%.2fx", bits/rep.AchievedOptimumBits)}
	}
	row := func(name string, bits float64) {
		mem.AddRow(append([]string{name, fmt.Sprintf("%.2f", bits/8), fmt.Sprintf("%.2f", bits)}, ratio(bits)...)...)
	}
	for _, m := range rep.Memory {
		row(string(m.Mode), m.BitsPerElem)
	}
	row(fmt.Sprintf("Bloom optimum, configured slice ε=%.3g", rep.SliceErr), rep.OptimumBitsPerElem)
	row(fmt.Sprintf("Bloom optimum, achieved slice ε=%.3g", rep.AchievedErr), rep.AchievedOptimumBits)
	row(fmt.Sprintf("Bloom optimum, total ε=%g", o.ErrorRate), rep.TotalOptimumBitsElem)
	return []Table{rates, mem}
}

func scrapyRate(rates []DedupRate) float64 {
	for _, r := range rates {
		if strings.HasPrefix(r.Method, "(b)") && r.ChecksPerSec > 0 {
			return r.ChecksPerSec
		}
	}
	return math.NaN()
}

// fullSlices times SeenBatch with every older slice present and filled to
// capacity: a Bloom filter at its optimum has half its bits set, so random
// bytes stand in for a full slice. With cache > 0 the filter keeps copies
// of the slices in process (dedup.Options.CacheBytes), read by Prepare
// before the timing starts.
func (r *dedupRun) fullSlices(ctx context.Context, cache int64) (DedupRate, error) {
	f, _, err := r.cachedFilter(dedup.ModeBloom, cache)
	if err != nil {
		return DedupRate{}, err
	}
	if err := r.fillOlderSlices(ctx, f); err != nil {
		return DedupRate{}, err
	}
	for range 2 + cache/(64<<20) { // Prepare reads at most 64 MiB a call
		if err := f.Prepare(ctx); err != nil {
			return DedupRate{}, err
		}
	}
	start, done := time.Now(), 0
	for done < len(r.fps) && time.Since(start) < r.opts.Duration {
		chunk := r.fps[done:min(done+r.opts.Batch, len(r.fps))]
		if _, err := f.SeenBatch(ctx, chunk); err != nil {
			return DedupRate{}, err
		}
		done += len(chunk)
	}
	rate := DedupRate{Method: "(a') bloom mode, batched Lua", Checks: done,
		ChecksPerSec: float64(done) / time.Since(start).Seconds(),
		Note:         fmt.Sprintf("all %d slices live, older ones full", r.opts.Window/r.opts.Granularity+1)}
	if cache > 0 {
		info := f.CacheInfo()
		rate.Method = "(a'') bloom mode, in-process cache"
		rate.Note = fmt.Sprintf("as (a'), %d sealed slices checked in the client, the current one written as its owner (%d MiB)",
			info.Sealed, info.Bytes>>20)
	}
	return rate, nil
}

// fillOlderSlices fills every block of the window's older slices, under
// the keys f reads them from.
func (r *dedupRun) fillOlderSlices(ctx context.Context, f *dedup.Filter) error {
	now, err := r.rdb.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("bench dedup: redis time: %w", err)
	}
	sz := f.Sizing()
	for back := 1; back < sz.Slices; back++ {
		t := now.Add(-time.Duration(back) * r.opts.Granularity)
		for _, key := range f.SliceKeys(t) {
			if err := fillRandom(ctx, r, key, sz.BlockBytes); err != nil {
				return err
			}
			r.rdb.PExpireAt(ctx, key, t.Truncate(r.opts.Granularity).Add(r.opts.Granularity+r.opts.Window))
		}
	}
	return nil
}

func fillRandom(ctx context.Context, r *dedupRun, key string, size int64) error {
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		_, _ = rand.Read(buf)
		if err := r.rdb.SetRange(ctx, key, off, string(buf[:min(int64(len(buf)), size-off)])).Err(); err != nil {
			return fmt.Errorf("bench dedup: fill slice: %w", err)
		}
	}
	return nil
}

// scrapyMethod is scrapy-redis-bloomfilter's check: k GETBITs, then k
// SETBITs for a new URL, one round trip each and not atomic, on one key of
// the same size as our slice.
func (r *dedupRun) scrapyMethod(ctx context.Context) (DedupRate, error) {
	r.phase++
	key := "{" + r.prefix + ":" + strconv.Itoa(r.phase) + "}:bloomfilter"
	slices := float64(r.opts.Window/r.opts.Granularity + 1)
	m := dedup.OptimalBits(int64(r.opts.N), r.opts.ErrorRate/slices)
	k := dedup.OptimalHashes(r.opts.ErrorRate / slices)
	if err := r.rdb.SetBit(ctx, key, int64(m-1), 0).Err(); err != nil {
		return DedupRate{}, fmt.Errorf("bench dedup: %w", err)
	}
	start, done := time.Now(), 0
	for ; done < min(r.opts.ScrapyN, len(r.fps)) && time.Since(start) < r.opts.Duration; done++ {
		if err := scrapyCheck(ctx, r, key, r.fps[done], m, k); err != nil {
			return DedupRate{}, err
		}
	}
	return DedupRate{Method: "(b) scrapy-redis-bloomfilter", Checks: done,
		ChecksPerSec: float64(done) / time.Since(start).Seconds(),
		Note:         fmt.Sprintf("%d GETBIT + %d SETBIT round trips per URL, not atomic", k, k)}, nil
}

func scrapyCheck(ctx context.Context, r *dedupRun, key string, fp canon.Fingerprint, m uint64, k int) error {
	h1, h2 := binary.BigEndian.Uint64(fp[0:8]), binary.BigEndian.Uint64(fp[8:16])
	exists := true
	for i := range k {
		bit, err := r.rdb.GetBit(ctx, key, int64((h1+uint64(i)*h2)%m)).Result()
		if err != nil {
			return fmt.Errorf("bench dedup: %w", err)
		}
		exists = exists && bit == 1
	}
	if exists {
		return nil
	}
	for i := range k {
		if err := r.rdb.SetBit(ctx, key, int64((h1+uint64(i)*h2)%m), 1).Err(); err != nil {
			return fmt.Errorf("bench dedup: %w", err)
		}
	}
	return nil
}
