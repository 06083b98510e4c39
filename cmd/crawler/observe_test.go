package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// scrapeMetrics GETs url and sums each metric family's samples (counters
// and gauges; a histogram's sample count), per family and role label.
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	sums := map[string]float64{}
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			sums[name] += sample(m)
		}
	}
	return sums
}

func sample(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// TestObserve_MetricsAndStatusPage (issue 11): a crawl by real processes
// started with --metrics and --http: the master's and the slave's /metrics,
// scraped over HTTP, count the pages they fetched, the dupefilter's
// verdicts, the queues and the Redis round trips; the status page's JSON API
// shows the job finished, with the slave's heartbeat.
func TestObserve_MetricsAndStatusPage(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := serveSite(t, faultSite) // 20 ms a page: the crawl lasts a few ticks of the master
	mport, sport, hport := freePort(t), freePort(t), freePort(t)
	env.masterArgs = []string{"--metrics", "127.0.0.1:" + mport, "--http", "127.0.0.1:" + hport}
	env.slaveArgs = []string{"--metrics", "127.0.0.1:" + sport, "--pprof"}
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submit(t, "observed", writeJob(t, "observed", base))
	env.waitProgress(t, "observed", "100 pages stored", func(c client.Counters) bool { return c.Stored >= 100 })
	during := scrapeMetrics(t, "http://127.0.0.1:"+sport+"/metrics")
	for port, want := range map[string]int{sport: 200, mport: 404} { // --pprof: the slave's profiles, not the master's
		if got := httpStatus(t, "http://127.0.0.1:"+port+"/debug/pprof/goroutine?debug=1"); got != want {
			t.Errorf("GET /debug/pprof/goroutine on :%s = %d, want %d", port, got, want)
		}
	}
	queueGauges := false // the master sets them each tick from the queues' depths
	testenv.Eventually(t, time.Minute, "the master's queue gauges, mid-crawl", func() bool {
		_, queueGauges = scrapeMetrics(t, "http://127.0.0.1:"+mport+"/metrics")["crawler_queue_tasks"]
		st, err := jobStatus(t.Context(), env.rdb, env.keys, "observed")
		return queueGauges || (err == nil && st.State == "finished")
	})
	st := env.wait(t, "observed", 3*time.Minute)
	checkCrawl(t, site, base, st, env.results(t, "observed"), env.failedURLs(t, "observed"))

	slave := scrapeMetrics(t, "http://127.0.0.1:"+sport+"/metrics")
	master := scrapeMetrics(t, "http://127.0.0.1:"+mport+"/metrics")
	if during["crawler_fetch_pages_total"] < 100 {
		t.Errorf("mid-crawl the slave's metrics counted %v pages fetched, want 100 or more", during["crawler_fetch_pages_total"])
	}
	// The slave's near-duplicate mirror holds an entry per page it added,
	// at least those not found near-duplicates of another.
	if got, least := during["crawler_neardup_mirror_entries"], 1.0; got < least || during["crawler_neardup_mirror_bytes"] < 1<<20 {
		t.Errorf("mid-crawl the slave's near-duplicate mirror held %v entries in %v bytes, want entries and its 1 MiB of heads",
			got, during["crawler_neardup_mirror_bytes"])
	}
	fetched := slave["crawler_fetch_pages_total"]
	if want := float64(st.Counters.Stored + st.Counters.Failed); fetched < want {
		t.Errorf("the slave counted %v pages fetched; it stored or failed %v", fetched, want)
	}
	for name, v := range map[string]float64{
		"slave crawler_fetch_duration_seconds": slave["crawler_fetch_duration_seconds"],
		"slave crawler_fetch_bytes_total":      slave["crawler_fetch_bytes_total"],
		"slave crawler_redis_commands_total":   slave["crawler_redis_commands_total"],
		"master crawler_fetch_pages_total":     master["crawler_fetch_pages_total"],
		"master crawler_redis_commands_total":  master["crawler_redis_commands_total"],
	} {
		if v <= 0 {
			t.Errorf("%s = %v, want more than 0", name, v)
		}
	}
	if got, want := master["crawler_dedup_urls_total"], float64(st.Counters.Discovered); got != want {
		t.Errorf("master counted %v URLs through the dupefilter, the job discovered %v", got, want)
	}
	if master["crawler_fetch_pages_total"] != float64(st.Counters.ListPages+st.Counters.ListFailed) {
		t.Errorf("master counted %v pages fetched, the job fetched %d list pages", master["crawler_fetch_pages_total"], st.Counters.ListPages)
	}
	if !queueGauges {
		t.Error("the master exported no crawler_queue_tasks while the job ran")
	}

	resp, err := http.Get("http://127.0.0.1:" + hport + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap struct {
		Jobs []struct {
			Job   string `json:"job"`
			State string `json:"state"`
		} `json:"jobs"`
		Slaves []struct {
			ID             int   `json:"id"`
			Live           bool  `json:"live"`
			HeartbeatAgeMS int64 `json:"heartbeat_age_ms"`
		} `json:"slaves"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatalf("status page JSON: %v", err)
	}
	if len(snap.Jobs) != 1 || snap.Jobs[0].Job != "observed" || snap.Jobs[0].State != "finished" {
		t.Errorf("status page jobs = %+v, want observed finished", snap.Jobs)
	}
	if len(snap.Slaves) != 1 || !snap.Slaves[0].Live {
		t.Errorf("status page slaves = %+v, want slave 0 live", snap.Slaves)
	}
}

// httpStatus is the status of a GET of url.
func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
