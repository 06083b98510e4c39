package bench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestBench runs the benchmark small, checks the table's shape and the
// counts it rests on, and prints it.
func TestProxyPool(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	o := DefaultProxyOptions()
	o.PoolSizes, o.Requests, o.Workers, o.Candidates, o.Concurrency = []int{5}, 200, 4, 8, 4
	if testing.Verbose() && os.Getenv("PROXY_BENCH_FULL") != "" {
		o = DefaultProxyOptions()
	}
	rep, err := ProxyPool(context.Background(), rdb, keys, o)
	if err != nil {
		t.Fatalf("ProxyPool: %v", err)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if s := rep.Selection[0]; s.RoundTrips < 2 || s.RoundTrips > 2.1 {
		t.Errorf("%.2f round trips per request, want 2 (one pick, one report)", s.RoundTrips)
	}
	if v := rep.Validation; v.Candidates != o.Candidates || v.Passed != o.Candidates {
		t.Errorf("validated %d, passed %d; want %d and %d", v.Candidates, v.Passed, o.Candidates, o.Candidates)
	}
	if n, _ := rdb.Keys(context.Background(), "*"+keys.Prefix+":bench:*").Result(); len(n) != 0 {
		t.Errorf("ProxyPool left %d keys behind", len(n))
	}
}
