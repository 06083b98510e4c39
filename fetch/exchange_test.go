package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestFetch_KeepExchange: with KeepExchange a page carries its request
// and its body as sent less the gzip, not charset-decoded; without, none.
func TestFetch_KeepExchange(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		_, _ = gz.Write([]byte("<h1>Caf\xe9</h1>"))
		_ = gz.Close()
	}))
	defer site.Close()
	f := New(DefaultOptions())
	page, err := f.Do(context.Background(), Request{URL: site.URL + "/p?q=1", AllowPrivate: true, KeepExchange: true,
		Headers: map[string]string{"Accept-Language": "fr"}})
	if err != nil {
		t.Fatal(err)
	}
	e := page.Exchange
	if e == nil || !bytes.Equal(e.Body, []byte("<h1>Caf\xe9</h1>")) || !e.Encoded || e.Status != "200 OK" || e.Proto != "HTTP/1.1" ||
		e.Method != "GET" || e.URL != site.URL+"/p?q=1" || e.RequestHeader.Get("Accept-Language") != "fr" ||
		e.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("exchange %+v", e)
	}
	if string(page.Body) != "<h1>Café</h1>" {
		t.Fatalf("page body %q, want it decoded to UTF-8 still", page.Body)
	}
	page, err = f.Do(context.Background(), Request{URL: site.URL, AllowPrivate: true})
	if err != nil || page.Exchange != nil {
		t.Fatalf("without KeepExchange: exchange %v, %v", page.Exchange, err)
	}
}
