package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/ctxtime"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// Backoff bounds of a sink that does not take its records: the first wait,
// doubled after each failed try up to the last.
const (
	firstBackoff = 50 * time.Millisecond
	lastBackoff  = 5 * time.Second
)

// Fanout sends records to several sinks, all or nothing: a record is taken
// once every sink took it.
type Fanout struct {
	sinks   []*counted
	log     *zap.Logger
	metrics *metrics.Sinks

	mu    sync.Mutex
	byJob JobCounts // since the last TakeCounts
}

// JobCounts are what sinks did with jobs' records: by job, by sink (its
// status name), by result (metrics.SinkAccepted, SinkRetried,
// SinkRefused).
type JobCounts map[string]map[string]map[string]int64

// add adds n to job's count of sink's result.
func (c JobCounts) add(job, sink, result string, n int64) {
	if c[job] == nil {
		c[job] = map[string]map[string]int64{}
	}
	if c[job][sink] == nil {
		c[job][sink] = map[string]int64{}
	}
	c[job][sink][result] += n
}

// Merge adds o's counts to c.
func (c JobCounts) Merge(o JobCounts) {
	for job, sinks := range o {
		for sink, results := range sinks {
			for result, n := range results {
				c.add(job, sink, result, n)
			}
		}
	}
}

// counted is a sink with the names its records are counted under: name,
// its URI with credentials hidden, in the process's metrics; status, its
// scheme (with #2, #3 … for a second sink of one scheme), in the jobs'
// status, where the slaves' counts add up.
type counted struct {
	Sink
	name, status string
}

// NewFanout sends to sinks, each named by its Spec (in the same order),
// counting what each accepted, retried and refused in m (nil: nowhere).
func NewFanout(sinks []Sink, specs []Spec, m *metrics.Sinks, log *zap.Logger) *Fanout {
	if log == nil {
		log = zap.NewNop()
	}
	f := &Fanout{log: log.Named("sink"), metrics: m, byJob: JobCounts{}}
	seen := map[string]int{}
	for i, s := range sinks {
		status := specs[i].Scheme
		if seen[status]++; seen[status] > 1 {
			status = fmt.Sprintf("%s#%d", status, seen[status])
		}
		f.sinks = append(f.sinks, &counted{Sink: s, name: specs[i].String(), status: status})
	}
	linkArchives(sinks)
	return f
}

// Len is how many sinks it sends to.
func (f *Fanout) Len() int {
	if f == nil {
		return 0
	}
	return len(f.sinks)
}

// KeepsExchanges reports whether a sink archives what went over the wire
// (Archiver), so that the caller keeps it.
func (f *Fanout) KeepsExchanges() bool {
	for _, s := range f.sinksOrNone() {
		if a, ok := s.Sink.(Archiver); ok && a.KeepsExchanges() {
			return true
		}
	}
	return false
}

// Put sends recs to every sink at once, each trying again what it did not
// take, with backoff, until it took everything or refused it, or ctx ends.
// It returns one error per record: nil once every sink took it; the
// refusal (wrapping ErrRefused) or ctx's error else.
func (f *Fanout) Put(ctx context.Context, recs []Record) []error {
	errs := make([]error, len(recs))
	if f.Len() == 0 || len(recs) == 0 {
		return errs
	}
	per := make([][]error, len(f.sinks))
	var wg sync.WaitGroup
	for k, s := range f.sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			per[k] = f.putAll(ctx, s, recs)
		}()
	}
	wg.Wait()
	for _, serrs := range per {
		for i, err := range serrs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// putAll sends recs to s until it took or refused each, or ctx ends.
func (f *Fanout) putAll(ctx context.Context, s *counted, recs []Record) []error {
	errs := make([]error, len(recs))
	todo := make([]int, len(recs))
	for i := range todo {
		todo[i] = i
	}
	wait := firstBackoff
	for tries := 0; ; tries++ {
		sub := make([]Record, len(todo))
		for k, i := range todo {
			sub[k] = recs[i]
		}
		var again []int
		var last error
		for k, err := range s.Put(ctx, sub) {
			i := todo[k]
			switch {
			case err == nil:
				f.count(s, recs[i].Item.Job, metrics.SinkAccepted, 1)
			case errors.Is(err, ErrRefused):
				f.count(s, recs[i].Item.Job, metrics.SinkRefused, 1)
				errs[i] = fmt.Errorf("sink %s: %w", s.name, err)
			default:
				again, last = append(again, i), err
			}
		}
		if len(again) == 0 {
			if tries > 0 {
				f.log.Info("sink took the records it held back", zap.String("sink", s.name), zap.Int("tries", tries+1))
			}
			return errs
		}
		if tries == 0 {
			f.log.Warn("sink did not take records; holding their tasks and trying again",
				zap.String("sink", s.name), zap.Int("records", len(again)), zap.Error(last))
		}
		if err := ctxtime.Sleep(ctx, wait); err != nil {
			for _, i := range again {
				errs[i] = fmt.Errorf("sink %s: %w (last error: %w)", s.name, err, last)
			}
			return errs
		}
		for _, i := range again {
			f.count(s, recs[i].Item.Job, metrics.SinkRetried, 1)
		}
		todo, wait = again, min(2*wait, lastBackoff)
	}
}

// PutFailure records f in every sink, trying again what failed until
// every sink took it or ctx ends.
func (f *Fanout) PutFailure(ctx context.Context, fl store.Failure) error {
	var errs []error
	for _, s := range f.sinksOrNone() {
		if err := f.putFailure(ctx, s, fl); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f *Fanout) putFailure(ctx context.Context, s *counted, fl store.Failure) error {
	wait := firstBackoff
	for {
		err := s.PutFailure(ctx, fl)
		switch {
		case err == nil:
			f.count(s, fl.Job, metrics.SinkAccepted, 1)
			return nil
		case errors.Is(err, ErrRefused):
			f.count(s, fl.Job, metrics.SinkRefused, 1)
			return fmt.Errorf("sink %s: %w", s.name, err)
		}
		if serr := ctxtime.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("sink %s: record failure of %s: %w (last error: %w)", s.name, fl.URL, serr, err)
		}
		f.count(s, fl.Job, metrics.SinkRetried, 1)
		wait = min(2*wait, lastBackoff)
	}
}

func (f *Fanout) sinksOrNone() []*counted {
	if f == nil {
		return nil
	}
	return f.sinks
}

// count adds n records of job sent to s with result to the metrics and
// to the job's counts.
func (f *Fanout) count(s *counted, job, result string, n int) {
	f.metrics.Count(s.name, result, n)
	f.mu.Lock()
	f.byJob.add(job, s.status, result, int64(n))
	f.mu.Unlock()
}

// TakeCounts returns what the sinks did with each job's records since the
// last call, for the jobs' status.
func (f *Fanout) TakeCounts() JobCounts {
	if f.Len() == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.byJob
	f.byJob = JobCounts{}
	return out
}

// Close closes every sink and returns their errors joined. The sinks that
// copy others' files (s3:// copying warc:'s) close last, once those files
// are complete.
func (f *Fanout) Close() error {
	var errs []error
	for _, last := range []bool{false, true} {
		for _, s := range f.sinksOrNone() {
			if _, copier := s.Sink.(*S3); copier != last {
				continue
			}
			if err := s.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close sink %s: %w", s.name, err))
			}
		}
	}
	return errors.Join(errs...)
}
