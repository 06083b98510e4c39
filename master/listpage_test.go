package master

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestJobRunner_offsiteListPage (issue 9, defect 5): a list page whose
// redirect leaves the allowed domains is counted as skipped_offsite, as a
// detail page redirected off-site is, not as list_failed; list pages are
// not discovered, so it adds nothing to skipped and the counters still add
// up. It is kept in the failures with its kind.
func TestJobRunner_offsiteListPage(t *testing.T) {
	f := newFixture(t)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/list" {
			http.NotFound(w, r)
			return
		}
		u, _ := url.Parse(srv.URL)
		http.Redirect(w, r, "http://localhost:"+u.Port()+"/elsewhere", http.StatusFound) // not the seed's host
	}))
	t.Cleanup(srv.Close)
	f.submit(t, srv.URL+"/list")
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
	testenv.Eventually(t, 20*time.Second, "the list page is committed", func() bool {
		return f.rdb.LLen(f.ctx, f.jk.Frontier()).Val()+f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val() == 0
	})
	stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
	if stats[cluster.StatSkippedOffsite] != "1" || stats[cluster.StatListFailed] != "" || stats[cluster.StatSkipped] != "" {
		t.Errorf("stats = %v; want skipped_offsite 1, no list_failed, no skipped (a list page is not discovered)", stats)
	}
	st := status(t, f)
	if c := st.Counters; c.Discovered != c.Settled() || c.SkippedOffsite != 1 {
		t.Errorf("counters %+v: want skipped_offsite 1 and discovered = settled", c)
	}
	_ = f.failures.Close()
	data, _ := os.ReadFile(f.failPath)
	if line := firstLine(data); !strings.Contains(line, `"kind":"list"`) || !strings.Contains(line, "offsite") {
		t.Errorf("failure record %q; want the list page, with the offsite reason", line)
	}
}
