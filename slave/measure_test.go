package slave

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// TestSlave_extractLimit (issue 18): a detail page whose fields cost more
// than its work budget (an XPath that walks 300 nested <div> many times)
// is failed with kind extract_limit, not stored with empty fields; the
// extraction is timed in crawler_extract_duration_seconds{result="limit"}
// and counted in crawler_failures_total; the failure reaches the status
// page's feed, and the slave publishes its load there.
func TestSlave_extractLimit(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	deep := strings.Repeat("<div>", 300) + `<a href="/x">x</a>` + strings.Repeat("</div>", 300)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>Deep</h1>" + deep + "</body></html>"))
	}))
	defer site.Close()
	spec := jobspec.Default()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "deep", []string{site.URL + "/list"}, true
	spec.DetailLink = &jobspec.LinkRule{CSS: "a"}
	spec.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}, "walk": {XPath: "//div//div//div//div//div//a"}}
	spec.ApplyDefaults()
	raw, _ := json.Marshal(&spec)
	jk := keys.Job("deep")
	rdb.Set(ctx, jk.Spec(), raw, 0)
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateRunning, cluster.StateSubmittedAt, "t0")
	rdb.ZAdd(ctx, keys.Jobs(), redis.Z{Score: 1, Member: "deep"})
	rdb.RPush(ctx, jk.Queue(0), taskFor("deep", site.URL+"/p/1"))

	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	items := jsonlStore(t)
	opts := DefaultOptions()
	opts.Concurrency = 2
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: items, Metrics: reg})

	var got feed.Failures
	testenv.Eventually(t, time.Minute, "the page to be failed", func() bool {
		fs, err := feed.ReadFailures(ctx, rdb, keys, []string{"deep"})
		got = fs["deep"]
		return err == nil && len(got.Recent) > 0
	})
	if got.ByKind[extract.FailureLimit] != 1 || !strings.Contains(got.Recent[0].Reason, extract.ErrLimit.Error()) {
		t.Errorf("failures %+v, want one extract_limit", got)
	}
	if n, _ := rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Int64(); n != 0 {
		t.Errorf("%d stored, want none", n)
	}
	mfs, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if mf.GetName() == "crawler_extract_duration_seconds" && l.GetValue() == metrics.ExtractLimit &&
					m.GetHistogram().GetSampleCount() == 1 {
					seen["duration"] = true
				}
				if mf.GetName() == "crawler_failures_total" && l.GetValue() == extract.FailureLimit && m.GetCounter().GetValue() == 1 {
					seen["failures"] = true
				}
			}
		}
	}
	if !seen["duration"] || !seen["failures"] {
		t.Errorf("metrics seen %v, want the limit in crawler_extract_duration_seconds and crawler_failures_total", seen)
	}
	loads, err := feed.ReadLoads(ctx, rdb, keys, []int{0})
	if l, ok := loads[0]; err != nil || !ok || l.Capacity != 8 || l.Concurrency != 2 {
		t.Errorf("published load %+v (%v), want capacity 8 at concurrency 2", loads, err)
	}
}

// TestLoadPublication_due: a load is published when it changes, and while
// it stays the same (an idle slave's) only once a lease, so that it never
// expires (it lives two leases) yet an idle slave costs a SET a lease.
func TestLoadPublication_due(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	idle := feed.SlaveLoad{Capacity: 64, Concurrency: 16, At: t0}
	var p loadPublication
	if !p.due(idle, t0, 5*time.Second) {
		t.Error("the first load is not published")
	}
	p = loadPublication{load: idle, at: t0}
	later := idle
	later.At = t0.Add(2 * time.Second)
	if p.due(later, t0.Add(2*time.Second), 5*time.Second) {
		t.Error("the same load is published again within a lease")
	}
	if !p.due(later, t0.Add(5*time.Second), 5*time.Second) {
		t.Error("the same load is not published again after a lease: it would expire")
	}
	busy := later
	busy.Held, busy.Hosts = 3, []feed.HostLoad{{Host: "example.com", Held: 3}}
	if !p.due(busy, t0.Add(time.Second), 5*time.Second) {
		t.Error("a changed load waits for the lease")
	}
	p = loadPublication{load: busy, at: t0.Add(time.Second)}
	moved := busy
	moved.Hosts = []feed.HostLoad{{Host: "example.com", Held: 2}}
	if !p.due(moved, t0.Add(2*time.Second), 5*time.Second) {
		t.Error("a load whose hosts changed is not published")
	}
}
