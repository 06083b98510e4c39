package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/extract"
)

// TestRun_linksOfAFailedItem (issue 29): an item page that lacks a
// required field is recorded failed (missing_field), and the two products
// linked only from it are found and stored: links are followed whatever
// the item's fate.
func TestRun_linksOfAFailedItem(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/p/1":
			fmt.Fprint(w, `<html><body><p>no title</p><a class="rel" href="/p/2">2</a><a class="rel" href="/p/3">3</a></body></html>`)
		case "/p/2", "/p/3":
			fmt.Fprintf(w, "<html><body><h1>%s</h1></body></html>", r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	job := fmt.Sprintf(`name: untitled
seeds: [{url: "%s/p/1", kind: product}]
allow_private_networks: true
per_host_rps: 100
kinds:
  product:
    item: true
    fields: {title: {css: "h1", required: true}}
    links: [{css: "a.rel", kind: product}]
`, srv.URL)
	stdout, _, out := runSpec(t, job)
	if got, want := storedPaths(t, out, srv.URL), "/p/2 /p/3"; got != want {
		t.Errorf("stored %s, want %s\n%s", got, want, stdout)
	}
	failures := readFailuresFile(t, out)
	if len(failures) != 1 || failures[0].URL != srv.URL+"/p/1" || failures[0].Kind != extract.FailureMissingField {
		t.Errorf("failures %+v, want /p/1's alone, of kind %s", failures, extract.FailureMissingField)
	}
	if want := "details discovered 3 = stored 2 + failed 1 + skipped 0 + duplicates 0"; !strings.Contains(stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout)
	}
}
