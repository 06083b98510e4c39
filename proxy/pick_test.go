package proxy

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// seedScored puts proxies in the pool whose scores are 1000, 500, 250
// and 100 (latencies 0, 1s, 3s and 9s at full success), each allowed more
// requests in flight than any test makes.
func seedScored(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) ([]Proxy, []float64) {
	t.Helper()
	o := testOptions()
	o.CheckURL, o.ProxyConcurrency = "http://127.0.0.1:9/", 1_000_000 // never contacted
	v := newValidator(t, rdb, keys, o)
	latencies := []time.Duration{0, time.Second, 3 * time.Second, 9 * time.Second}
	ps := make([]Proxy, len(latencies))
	seeds := make([]Seeded, len(latencies))
	for i, l := range latencies {
		ps[i] = mustParse(t, fmt.Sprintf("http://10.1.0.%d:3128", i+1))
		seeds[i] = Seeded{Proxy: ps[i], Latency: l}
	}
	if err := v.Seed(ctxT(t), seeds); err != nil {
		t.Fatal(err)
	}
	scores := make([]float64, len(ps))
	for i, p := range ps {
		scores[i] = rdb.ZScore(ctxT(t), keys.Proxies().Usable(), string(p.ID())).Val()
	}
	if fmt.Sprint(scores) != "[1000 500 250 100]" {
		t.Fatalf("seeded scores %v, want [1000 500 250 100]", scores)
	}
	return ps, scores
}

// TestPool_PickWeighted: Pick chooses among the Best proxies at random,
// each in proportion to its score. Each proxy's share of 1,500 picks is
// within six standard deviations of its weight (a false alarm about once
// in 10^8 runs), and proxies outside the Best are never picked.
func TestPool_PickWeighted(t *testing.T) {
	const picks = 1500
	target := mustURL(t, "http://example.com/")
	servers(t, func(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) {
		ps, scores := seedScored(t, rdb, keys)
		for _, best := range []int{4, 2} {
			pool := newPool(t, rdb, keys, func(o *PoolOptions) { o.Best = best })
			counts := map[ID]int{}
			for range picks {
				p, err := pool.Pick(ctxT(t), target, nil)
				if err != nil {
					t.Fatalf("Pick: %v", err)
				}
				counts[p.ID()]++
			}
			total := 0.0
			for _, s := range scores[:best] {
				total += s
			}
			for i, p := range ps {
				want := 0.0
				if i < best {
					want = scores[i] / total
				}
				got := float64(counts[p.ID()]) / picks
				if tol := 6 * math.Sqrt(want*(1-want)/picks); math.Abs(got-want) > tol {
					t.Errorf("best %d: proxy %d (score %.0f) got %.3f of the picks, want %.3f ± %.3f",
						best, i, scores[i], got, want, tol)
				}
			}
		}
	})
}

// TestPool_ListEmpty: an empty pool lists as "proxies": [], not null.
func TestPool_ListEmpty(t *testing.T) {
	servers(t, func(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) {
		for _, all := range []bool{false, true} {
			l, err := newPool(t, rdb, keys, nil).List(ctxT(t), all)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"proxies":[]`) {
				t.Errorf("List(all=%v) as JSON = %s, want \"proxies\":[]", all, b)
			}
		}
	})
}
