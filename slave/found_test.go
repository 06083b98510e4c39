package slave

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestSlave_linksOfAFailedItem (issue 29): an item page that lacks a
// required field is recorded failed (missing_field), and the links it
// holds go to the master all the same: links are followed whatever the
// item's fate.
func TestSlave_linksOfAFailedItem(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><body><p>no title</p><a class="rel" href="/p/2">2</a><a class="rel" href="/p/3">3</a></body></html>`))
	}))
	t.Cleanup(site.Close)
	jk := runningJobSpec(t, ctx, rdb, keys, "untitled", site.URL, func(s *jobspec.Job) {
		s.DetailLink, s.Fields = nil, nil
		s.Kinds = map[string]jobspec.PageKind{
			jobspec.KindStart: {Links: []jobspec.LinkRule{{CSS: "a.p", Kind: "product"}}},
			"product": {Item: true, Fields: map[string]jobspec.FieldRule{"title": {CSS: "h1", Required: true}},
				Links: []jobspec.LinkRule{{CSS: "a.rel", Kind: "product"}}},
		}
	})
	url := site.URL + "/p/1"
	rdb.RPush(ctx, jk.Queue(0), cluster.Task{URL: url, FP: canon.RequestFingerprint("GET", url, nil).String(),
		Job: "untitled", Kind: "product", Round: 1}.Encode())
	items, path := jsonlStoreAt(t)
	runSlave(t, ctx, DefaultOptions(), Deps{Redis: rdb, Keys: keys, Store: items})
	settled(t, ctx, rdb, jk)

	if f, ok := failureRecords(t, items, path)[url]; !ok || f.Kind != extract.FailureMissingField {
		t.Errorf("record of %s: %+v (recorded %v), want kind %s", url, f, ok, extract.FailureMissingField)
	}
	entries := rdb.LRange(ctx, jk.Found(), 0, -1).Val()
	if len(entries) != 1 {
		t.Fatalf("Found entries %q, want the page's one", entries)
	}
	found, err := cluster.DecodeFoundLinks(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]cluster.FoundLink{{URL: site.URL + "/p/2", Kind: "product"}, {URL: site.URL + "/p/3", Kind: "product"}})
	if found.Page != url || fmt.Sprint(found.Links) != want {
		t.Errorf("Found entry of %s with links %v, want %s's with %s", found.Page, found.Links, url, want)
	}
}
