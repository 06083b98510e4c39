package master

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// TestJobRunner_listPageExtractLimit (issue 18): a list page whose
// detail_link costs more than the page's work budget (a text
// pseudo-class over 400 nested <div> around a big text) is failed with
// kind extract_limit, counted list_failed, and queues nothing from it; the
// failure reaches the status page's feed.
func TestJobRunner_listPageExtractLimit(t *testing.T) {
	f := newFixture(t)
	body := strings.Repeat("<div>", 400) + strings.Repeat("lorem ipsum ", 100_000) + `<a class="d" href="/p/1">1</a>` +
		strings.Repeat("</div>", 400)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>" + body + "</body></html>"))
	}))
	t.Cleanup(srv.Close)
	spec := cluster.DefaultJobSpec()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "news", []string{srv.URL + "/list"}, true
	spec.DetailLink = &cluster.LinkRule{CSS: `div:contains("nothing like this") a.d`}
	spec.NextLink = &cluster.LinkRule{CSS: "a.next"}
	spec.Fields = map[string]cluster.FieldRule{"title": {CSS: "h1"}}
	spec.Dedup.Capacity = 10000
	if err := f.jobs(t).Submit(f.ctx, &spec); err != nil {
		t.Fatalf("submit: %v", err)
	}
	r := f.runner(t, 0)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	dlCtx, stop := context.WithCancel(f.ctx)
	dlDone := make(chan struct{})
	go func() { defer close(dlDone); _ = f.m.dl.Run(dlCtx) }()
	t.Cleanup(func() { stop(); <-dlDone })
	ds, err := r.lists.Take(f.ctx, 1, time.Minute)
	if err != nil || len(ds) != 1 {
		t.Fatalf("take: %+v %v", ds, err)
	}
	r.startList(f.ctx, 1, ds[0])
	testenv.Eventually(t, 40*time.Second, "the list page is settled", func() bool {
		return f.rdb.LLen(f.ctx, f.jk.Frontier()).Val()+f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val() == 0
	})
	stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
	if stats[cluster.StatListFailed] != "1" || stats[cluster.StatRouted] != "" {
		t.Errorf("stats = %v; want list_failed 1 and nothing routed", stats)
	}
	_ = f.failures.Close()
	data, _ := os.ReadFile(f.failPath)
	if line := firstLine(data); !strings.Contains(line, `"kind":"`+extract.FailureLimit+`"`) {
		t.Errorf("failure record %q; want kind %s", line, extract.FailureLimit)
	}
	fs, err := feed.ReadFailures(f.ctx, f.rdb, f.keys, []string{"news"})
	if err != nil || fs["news"].ByKind[extract.FailureLimit] != 1 {
		t.Errorf("feed %+v (%v), want one extract_limit", fs, err)
	}
}
