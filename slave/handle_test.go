package slave

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// recordingStore is a real store that also keeps the items written, for
// the test to read.
type recordingStore struct {
	ItemStore
	mu    sync.Mutex
	items map[string]store.Item
}

func (r *recordingStore) SaveVisits(ctx context.Context, now time.Time, visits []store.Visit) []store.VisitResult {
	res := r.ItemStore.SaveVisits(ctx, now, visits)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, v := range visits {
		if res[i].Err == nil {
			r.items[v.Item.URL] = v.Item
		}
	}
	return res
}

func (r *recordingStore) item(url string) (store.Item, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	it, ok := r.items[url]
	return it, ok
}

// TestSlave_finalURL: an item keeps the URL its task asked for and records
// where a redirect led as final_url; a page not redirected has none.
func TestSlave_finalURL(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/landing?from=moved", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>" + r.URL.Path + "</h1></body></html>"))
	}))
	t.Cleanup(site.Close)
	jk := runningJob(t, ctx, rdb, keys, "redirects", site.URL, "/moved", "/direct")
	items := &recordingStore{ItemStore: jsonlStore(t), items: map[string]store.Item{}}
	opts := DefaultOptions()
	opts.Concurrency = 2
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: items})
	testenv.Eventually(t, 20*time.Second, "both pages stored", func() bool {
		return rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Val() == "2"
	})
	moved, ok := items.item(site.URL + "/moved")
	if !ok {
		t.Fatalf("no item under the task's URL %s/moved", site.URL)
	}
	if want := site.URL + "/landing?from=moved"; moved.FinalURL != want {
		t.Errorf("final_url = %q, want %q", moved.FinalURL, want)
	}
	if got := moved.Fields["title"]; got != "/landing" {
		t.Errorf("title = %v, want the landing page's", got)
	}
	if direct, ok := items.item(site.URL + "/direct"); !ok || direct.FinalURL != "" {
		t.Errorf("the page not redirected: %+v (stored %v), want no final_url", direct, ok)
	}
}
