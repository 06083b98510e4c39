package sink

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// BenchmarkPostgres_Put writes batches of 256 new items (a slave's full
// commit batch) to the test PostgreSQL: one round trip a batch.
func BenchmarkPostgres_Put(b *testing.B) {
	_, table := testenv.Postgres(b)
	s, _, err := Open(context.Background(), testenv.PostgresSink(table), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const batch = 256
	b.ReportAllocs()
	for n := 0; b.Loop(); n++ {
		recs := make([]Record, batch)
		for i := range recs {
			recs[i] = Record{Item: item("bench", n*batch+i, fmt.Sprint("title ", i))}
		}
		for _, err := range s.Put(context.Background(), recs) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "items/s")
}

// BenchmarkWARC_Put archives batches of 32 pages, fsynced per batch.
func BenchmarkWARC_Put(b *testing.B) {
	site := latin1Site(b)
	w, _, err := Open(context.Background(), "warc:"+filepath.Join(b.TempDir(), "warc"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	recs := fetchExchanges(b, site.URL, 32)
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range w.Put(context.Background(), recs) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "pages/s")
}
