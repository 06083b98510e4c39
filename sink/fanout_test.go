package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// flaky is a sink beside the real ones: it fails every record its first
// downTries tries, and refuses the pages listed in refuse.
type flaky struct {
	mu        sync.Mutex
	downTries int
	refuse    map[string]bool
	took      map[string]int
	tries     int
	onTry     func(tries int) // nil: nothing
}

func (f *flaky) Put(_ context.Context, recs []Record) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(recs))
	for i, r := range recs {
		switch {
		case f.downTries > 0:
			errs[i] = errors.New("connection refused")
		case f.refuse[r.Item.URL]:
			errs[i] = fmt.Errorf("too big: %w", ErrRefused)
		default:
			f.took[r.Item.URL]++
		}
	}
	f.downTries--
	f.tries++
	if f.onTry != nil {
		f.onTry(f.tries)
	}
	return errs
}

func (f *flaky) PutFailure(context.Context, store.Failure) error { return nil }
func (f *flaky) Close() error                                    { return nil }

func specs(t *testing.T, uris ...string) []Spec {
	var out []Spec
	for _, u := range uris {
		s, err := Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestFanout_Put: a sink that is down is tried again until it takes the
// records, and only it: the sink that took them does not get them twice.
// A refused record is an error for its page alone.
func TestFanout_Put(t *testing.T) {
	down := &flaky{downTries: 3, took: map[string]int{}}
	up := &flaky{refuse: map[string]bool{}, took: map[string]int{}}
	a, b := item("news", 1, "A"), item("news", 2, "B")
	up.refuse[b.URL] = true
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := NewFanout([]Sink{down, up}, specs(t, "postgres://h/down", "postgres://h/up"), reg.Sinks(), nil)
	errs := f.Put(context.Background(), []Record{{Item: a}, {Item: b}})
	if errs[0] != nil || !errors.Is(errs[1], ErrRefused) {
		t.Fatalf("errors %v, want nil and a refusal", errs)
	}
	if down.took[a.URL] != 1 || down.took[b.URL] != 1 || up.took[a.URL] != 1 {
		t.Fatalf("down took %v, up took %v: want each record once", down.took, up.took)
	}
	want := map[string]float64{"postgres://h/down accepted": 2, "postgres://h/down retried": 6,
		"postgres://h/up accepted": 1, "postgres://h/up refused": 1}
	if got := sinkCounts(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
}

// TestFanout_Put_cancelled: a sink down until the caller gives up leaves
// every record with an error: nothing is acknowledged.
func TestFanout_Put_cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	down := &flaky{downTries: 1 << 30, took: map[string]int{}, onTry: func(tries int) {
		if tries == 3 {
			cancel()
		}
	}}
	f := NewFanout([]Sink{down}, specs(t, "postgres://h/down"), nil, nil)
	for i, err := range f.Put(ctx, []Record{{Item: item("news", 1, "A")}, {Item: item("news", 2, "B")}}) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("record %d: %v, want context.Canceled", i, err)
		}
	}
}

// TestFanout_postgresKilled: PostgreSQL's connections killed between and
// during batches (pg_terminate_backend) lose nothing and store nothing
// twice: every page is one row.
func TestFanout_postgresKilled(t *testing.T) {
	pool, table := testenv.Postgres(t)
	ctx := context.Background()
	app := table + "_app"
	uri := testenv.PostgresSink(table) + "&application_name=" + app
	s, spec, err := Open(ctx, uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFanout([]Sink{s}, []Spec{spec}, nil, nil)
	t.Cleanup(func() { _ = f.Close() })
	kill := func() int {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const batches, per = 20, 50
	killed := 0
	for b := range batches {
		recs := make([]Record, per)
		for i := range recs {
			recs[i] = Record{Item: item("news", b*per+i, fmt.Sprint("page ", b*per+i))}
		}
		var wg sync.WaitGroup
		if b%3 == 1 { // kill while the batch is on its way
			wg.Add(1)
			go func() { defer wg.Done(); killed += kill() }()
		}
		for i, err := range f.Put(ctx, recs) {
			if err != nil {
				t.Fatalf("batch %d record %d: %v", b, i, err)
			}
		}
		wg.Wait()
		if b%3 == 2 {
			killed += kill()
		}
		if b%5 == 4 { // a redelivered batch
			for i, err := range f.Put(ctx, recs) {
				if err != nil {
					t.Fatalf("batch %d again, record %d: %v", b, i, err)
				}
			}
		}
	}
	if killed == 0 {
		t.Fatal("no connection was killed: the test tested nothing")
	}
	var rows, pages, maxVersion int
	err = pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(DISTINCT fingerprint), max(version) FROM %s`, table)).Scan(&rows, &pages, &maxVersion)
	if err != nil {
		t.Fatal(err)
	}
	if rows != batches*per || pages != batches*per || maxVersion != 1 {
		t.Fatalf("%d rows of %d pages, highest version %d; want %d pages once each, version 1", rows, pages, maxVersion, batches*per)
	}
	t.Logf("killed %d connections", killed)
}

// sinkCounts reads crawler_sink_records_total as "sink result" -> count.
func sinkCounts(t *testing.T, reg *metrics.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range fams {
		if mf.GetName() != "crawler_sink_records_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["sink"]+" "+labels["result"]] = m.GetCounter().GetValue()
		}
	}
	return out
}
