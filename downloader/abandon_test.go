package downloader

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestDownloader_abandonWaitingForWorker: a request that has its host's
// turn but waits for one of the process's workers (Options.Workers) is
// still unsent, so its Abandon ends it: Cancelled at once, never sent, and
// the host slot it held is given back (the site sees it only after the
// sent one, and another page takes the slot).
func TestDownloader_abandonWaitingForWorker(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		html(w, "<h1>x</h1>")
	})
	defer close(release)
	opts := fastOptions()
	opts.Workers = 1
	g := newRig(t, opts)
	j := g.job(func(spec *jobspec.Job) { spec.PerHostConcurrency = 2 })
	g.submit(j, s.URL+"/slow")
	testenv.Eventually(t, 30*time.Second, "the slow page sent", func() bool { return s.count("/slow") == 1 })
	abandon, stop := context.WithCancel(context.Background())
	g.fetch(g.ctx, &Request{URL: s.URL + "/waiting", Job: j, Abandon: abandon})
	testenv.Eventually(t, 30*time.Second, "the second page getting its host's turn and waiting for a worker",
		func() bool { return g.d.forWorker.Load() == 1 })
	stop()
	res := g.wait(1, 30*time.Second)[0]
	if res.Kind != Cancelled || res.Request.URL != s.URL+"/waiting" {
		t.Fatalf("abandoned request: %v %s, want Cancelled", res.Kind, res.Request.URL)
	}
	if n := s.count("/waiting"); n != 0 {
		t.Fatalf("the abandoned request was sent %d times", n)
	}
	// The host slot it held is free again: with 2 slots, one held by the
	// slow page, another page gets its turn and waits for the worker.
	g.submit(j, s.URL+"/next")
	testenv.Eventually(t, 30*time.Second, "the abandoned request giving back its host slot",
		func() bool { return g.d.forWorker.Load() == 1 })
}
