package slave

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/shopsite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// queueRound queues a task per page for slave 0, of round round.
func queueRound(t testing.TB, rdb *redis.Client, jk cluster.JobKeys, base string, round int64, pages int) {
	t.Helper()
	for i := range pages {
		url := base + "/p/" + strconv.Itoa(i)
		task := cluster.Task{URL: url, FP: canon.RequestFingerprint("GET", url, nil).String(), Job: "shop", Round: round}
		if err := rdb.RPush(context.Background(), jk.Queue(0), task.Encode()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitStored waits until the job's stats count n pages stored, and returns
// the stats.
func waitStored(t testing.TB, rdb *redis.Client, jk cluster.JobKeys, n int) map[string]string {
	t.Helper()
	var stats map[string]string
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d pages stored", n), func() bool {
		stats = rdb.HGetAll(context.Background(), jk.Stats()).Val()
		return stats[cluster.StatStored] == strconv.Itoa(n)
	})
	return stats
}

// wantStats checks the stats fields named.
func wantStats(t *testing.T, stats map[string]string, want map[string]int) {
	t.Helper()
	for k, n := range want {
		if got, _ := strconv.Atoi(stats[k]); got != n {
			t.Errorf("stats %s = %d, want %d (all: %v)", k, got, n, stats)
		}
	}
}

// TestSlave_Recrawl: round 1 stores 20 pages as new; the site changes 3 of
// them; round 2 fetches those 3 in full (changed, version 2), and the 17
// others answer 304 (not_modified) or, from a site without validators,
// come in full with the same fields but a different banner (unchanged).
func TestSlave_Recrawl(t *testing.T) {
	for _, validators := range []bool{true, false} {
		t.Run(fmt.Sprintf("validators=%v", validators), func(t *testing.T) {
			const pages = 20
			changed := []int{2, 7, 11}
			rdb, keys := testenv.Redis(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			site := shopsite.New(pages, validators, 0)
			srv := httptest.NewServer(site)
			defer srv.Close()
			jk := runningJob(t, ctx, rdb, keys, "shop", srv.URL)
			m := mongoStore(t, ctx)
			opts := DefaultOptions()
			opts.Concurrency = 4
			reg, err := metrics.New(metrics.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: m, Metrics: reg})

			queueRound(t, rdb, jk, srv.URL, 1, pages)
			wantStats(t, waitStored(t, rdb, jk, pages), map[string]int{"new": pages, "new@1": pages, "changed": 0})
			site.Change(changed...)
			before := site.Full()
			queueRound(t, rdb, jk, srv.URL, 2, pages)
			stats := waitStored(t, rdb, jk, 2*pages)

			same := pages - len(changed)
			want := map[string]int{"new": pages, "changed": 3, "changed@2": 3, "new@2": 0}
			if validators {
				want["not_modified"], want["not_modified@2"], want["unchanged@2"] = same, same, 0
				if got := site.Full() - before; got != int64(len(changed)) {
					t.Errorf("round 2 downloaded %d pages in full, want the %d changed", got, len(changed))
				}
				if got := site.NotModified(); got != int64(same) {
					t.Errorf("%d answers were 304, want %d", got, same)
				}
			} else {
				want["unchanged"], want["unchanged@2"], want["not_modified@2"] = same, same, 0
			}
			wantStats(t, stats, want)
			for _, result := range []string{"new", "changed", "unchanged", "not_modified"} {
				if got := recrawlMetric(t, reg, result); got != want[result] {
					t.Errorf("crawler_recrawl_pages_total{result=%q} = %d, want %d", result, got, want[result])
				}
			}
			got, err := m.Validators(ctx, pageIDs(srv.URL, pages))
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range pageIDs(srv.URL, pages) {
				wantVersion := int64(1)
				if i == 2 || i == 7 || i == 11 {
					wantVersion = 2
				}
				if got[id].Version != wantVersion {
					t.Errorf("page %d: version %d, want %d", i, got[id].Version, wantVersion)
				}
			}
		})
	}
}

func pageIDs(base string, pages int) []string {
	ids := make([]string, pages)
	for i := range ids {
		ids[i] = store.ItemID("shop", canon.RequestFingerprint("GET", base+"/p/"+strconv.Itoa(i), nil).String())
	}
	return ids
}

// recrawlMetric reads crawler_recrawl_pages_total of job shop for result.
func recrawlMetric(t *testing.T, reg *metrics.Registry, result string) int {
	t.Helper()
	mfs, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != "crawler_recrawl_pages_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["job"] == "shop" && labels["result"] == result {
				n += int(m.GetCounter().GetValue())
			}
		}
	}
	return n
}
