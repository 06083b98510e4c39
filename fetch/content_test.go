package fetch

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// pdf is a PDF-looking body with bytes a charset decoder would change: a
// meta charset, bytes invalid in UTF-8, GBK-looking pairs.
const pdf = "%PDF-1.4\n<meta charset=\"gbk\">\xff\xfe\x80\x81 stream\xc4\xe3\xba\xc3 endstream\n%%EOF"

func TestFetcher_contentTypes(t *testing.T) {
	const html = "<!DOCTYPE html><html><body><p>caf\xc3\xa9</p></body></html>"
	for _, tc := range []struct {
		name     string
		header   []string // nil: no Content-Type header at all
		body     string
		encoding string
		wantType string
		wantHTML bool
	}{
		{"text/html", []string{"text/html; charset=utf-8"}, html, "", "text/html; charset=utf-8", true},
		{"upper case", []string{"TEXT/HTML"}, html, "", "TEXT/HTML", true},
		{"xhtml", []string{"application/xhtml+xml"}, html, "", "application/xhtml+xml", true},
		{"missing, html body", nil, html, "", "text/html; charset=utf-8", true},
		{"missing, gzipped html body", nil, html, "gzip", "text/html; charset=utf-8", true},
		{"octet-stream, html body", []string{"application/octet-stream"}, html, "", "text/html; charset=utf-8", true},
		{"octet-stream, pdf body", []string{"application/octet-stream"}, pdf, "", "application/pdf", false},
		{"missing, pdf body", nil, pdf, "", "application/pdf", false},
		{"pdf", []string{"application/pdf"}, pdf, "", "application/pdf", false},
		{"text/plain that looks like html", []string{"text/plain"}, html, "", "text/plain", false},
		{"json", []string{"application/json"}, `{"a":1}`, "", "application/json", false},
		{"empty body, no type", nil, "", "", "text/plain; charset=utf-8", false},
	} {
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = tc.header // nil suppresses the server's own sniffing
			b := []byte(tc.body)
			if tc.encoding != "" {
				w.Header().Set("Content-Encoding", tc.encoding)
				b = compress(t, tc.encoding, b)
			}
			_, _ = w.Write(b)
		})
		t.Run(tc.name+"/refused or fetched", func(t *testing.T) {
			p, err := do(t, testFetcher(nil), Request{URL: s.URL})
			if tc.wantHTML {
				if err != nil || !p.HTML || p.ContentType != tc.wantType || string(p.Body) != tc.body {
					t.Errorf("Do = %+v, %v; want an HTML page of type %q", p, err, tc.wantType)
				}
				return
			}
			fe := fetchError(t, err)
			var nh *NotHTMLError
			if !errors.Is(err, ErrNotHTML) || fe.Transient || fe.Status != 200 || !errors.As(err, &nh) || nh.ContentType != tc.wantType {
				t.Errorf("Do = %v (status %d, transient %v); want permanent ErrNotHTML for %q", err, fe.Status, fe.Transient, tc.wantType)
			}
			if !strings.Contains(err.Error(), tc.wantType) {
				t.Errorf("message %q does not name the type", err)
			}
		})
		t.Run(tc.name+"/AllowNonHTML", func(t *testing.T) {
			p, err := do(t, testFetcher(nil), Request{URL: s.URL, AllowNonHTML: true})
			if err != nil || p.HTML != tc.wantHTML || p.ContentType != tc.wantType || string(p.Body) != tc.body {
				t.Errorf("Do = %+v, %v; want body as sent, type %q, HTML %v", p, err, tc.wantType, tc.wantHTML)
			}
		})
	}
}

func TestContentType(t *testing.T) {
	for _, tc := range []struct {
		header, head string
		wantType     string
		wantHTML     bool
	}{
		{"text/html", "", "text/html", true},
		{" Text/HTML ; charset=gbk", "", " Text/HTML ; charset=gbk", true},
		{"application/xhtml+xml;charset=utf-8", "", "application/xhtml+xml;charset=utf-8", true},
		{"text/htmlx", "<html>", "text/htmlx", false},
		{"text/html;;;=", "", "text/html;;;=", true},
		{"", "<HTML><body>", "text/html; charset=utf-8", true},
		{"application/octet-stream", "  <!doctype html>", "text/html; charset=utf-8", true},
		{"unknown/unknown", "%PDF-1.7", "application/pdf", false},
		{"", "\x89PNG\r\n\x1a\n", "image/png", false},
		{"image/png", "<html>", "image/png", false},
	} {
		gotType, gotHTML := contentType(tc.header, []byte(tc.head))
		if gotType != tc.wantType || gotHTML != tc.wantHTML {
			t.Errorf("contentType(%q, %q) = %q, %v; want %q, %v", tc.header, tc.head, gotType, gotHTML, tc.wantType, tc.wantHTML)
		}
	}
}

func TestFetcher_invalidUTF8(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<p>ok \xff\xfe end</p>"))
	})
	p, err := do(t, testFetcher(nil), Request{URL: s.URL})
	if err != nil || string(p.Body) != "<p>ok \uFFFD end</p>" {
		t.Errorf("Do = %q, %v; want the invalid bytes replaced by U+FFFD", body(p), err)
	}
}
