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
	spec := cluster.DefaultJobSpec()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "deep", []string{site.URL + "/list"}, true
	spec.DetailLink = &cluster.LinkRule{CSS: "a"}
	spec.Fields = map[string]cluster.FieldRule{"title": {CSS: "h1"}, "walk": {XPath: "//div//div//div//div//div//a"}}
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
