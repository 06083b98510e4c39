package fetch

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// validatingSite serves one page with an ETag and a Last-Modified, and
// answers 304 to a request that sends either back unchanged.
func validatingSite(t *testing.T, etag, modified string) *site {
	return newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if (etag != "" && r.Header.Get("If-None-Match") == etag) ||
			(modified != "" && r.Header.Get("If-Modified-Since") == modified) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if etag != "" {
			w.Header().Set("ETag", etag)
		}
		if modified != "" {
			w.Header().Set("Last-Modified", modified)
		}
		_, _ = w.Write([]byte("<html><h1>page</h1></html>"))
	})
}

func fetchWith(t *testing.T, url string, v Validators) *Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	page, err := testFetcher(nil).Do(ctx, Request{URL: url, AllowPrivate: true, Validators: v})
	if err != nil {
		t.Fatalf("Fetch with %+v: %v", v, err)
	}
	return page
}

func TestFetchKeepsValidators(t *testing.T) {
	const etag, modified = `"v1"`, "Wed, 21 Oct 2026 07:28:00 GMT"
	s := validatingSite(t, etag, modified)
	page := fetchWith(t, s.URL, Validators{})
	if page.NotModified || page.Status != 200 || len(page.Body) == 0 {
		t.Fatalf("first fetch: status %d, not modified %v, %d bytes", page.Status, page.NotModified, len(page.Body))
	}
	if want := (Validators{ETag: etag, LastModified: modified}); page.Validators != want {
		t.Fatalf("validators %+v, want %+v", page.Validators, want)
	}
}

func TestFetchNotModified(t *testing.T) {
	const etag, modified = `W/"abc"`, "Wed, 21 Oct 2026 07:28:00 GMT"
	for _, tc := range []struct {
		name string
		sent Validators
	}{
		{"etag", Validators{ETag: etag}},
		{"last-modified", Validators{LastModified: modified}},
		{"both", Validators{ETag: etag, LastModified: modified}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validatingSite(t, etag, modified)
			page := fetchWith(t, s.URL, tc.sent)
			if !page.NotModified || page.Status != http.StatusNotModified || len(page.Body) != 0 {
				t.Fatalf("status %d, not modified %v, %d bytes; want a 304 page", page.Status, page.NotModified, len(page.Body))
			}
			if page.Validators != tc.sent {
				t.Fatalf("validators %+v, want those sent, %+v", page.Validators, tc.sent)
			}
			page.Release()
		})
	}
}

func TestFetchChangedPageAnswersInFull(t *testing.T) {
	s := validatingSite(t, `"v2"`, "")
	page := fetchWith(t, s.URL, Validators{ETag: `"v1"`})
	if page.NotModified || page.Status != 200 || page.Validators.ETag != `"v2"` {
		t.Fatalf("status %d, not modified %v, etag %q; want the new page", page.Status, page.NotModified, page.Validators.ETag)
	}
}

// A 304 nobody asked for (no validators sent) stays an error: the page
// cannot be read.
func TestUnaskedNotModifiedIsAnError(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := testFetcher(nil).Do(ctx, Request{URL: s.URL, AllowPrivate: true})
	if fe := fetchError(t, err); fe.Status != http.StatusNotModified {
		t.Fatalf("status %d, want 304", fe.Status)
	}
}
