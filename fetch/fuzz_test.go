package fetch

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Run each for a bounded time, e.g.
//
//	go test -run='^$' -fuzz=FuzzParseRetryAfter -fuzztime=20s ./fetch/
//	go test -run='^$' -fuzz=FuzzContentType -fuzztime=20s ./fetch/
//	go test -run='^$' -fuzz=FuzzDecodeContent -fuzztime=20s ./fetch/

// FuzzParseRetryAfter: any header value gives a wait in 0..MaxRetryAfter;
// delay-seconds give exactly that many seconds (capped); an HTTP date
// gives its distance from now (0 in the past, capped); anything else 0.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"", "0", "120", " 7 ", "86401", "99999999999999999999999", "-5", "1.5", "1e3", "+3",
		"Sun, 01 Mar 2026 12:01:30 GMT", "Sunday, 01-Mar-26 12:00:10 GMT", "Sun Mar  1 12:00:05 2026",
		"Sun, 01 Mar 2026 11:00:00 GMT", "Fri, 01 Mar 2030 12:00:00 GMT", "Mon, 31 Dec 9999 23:59:59 GMT",
		"Mon, 01 Jan 0001 00:00:00 GMT", "٣", "\t42\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := parseRetryAfter(v, now)
		if got < 0 || got > MaxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %v, outside 0..%v", v, got, MaxRetryAfter)
		}
		trimmed := strings.TrimSpace(v)
		if trimmed != "" && strings.Trim(trimmed, "0123456789") == "" {
			want := MaxRetryAfter
			if n, err := strconv.ParseInt(trimmed, 10, 64); err == nil && n <= int64(MaxRetryAfter/time.Second) {
				want = time.Duration(n) * time.Second
			}
			if got != want {
				t.Fatalf("parseRetryAfter(%q) = %v, want %v", v, got, want)
			}
			return
		}
		at, err := http.ParseTime(trimmed)
		if err != nil {
			if got != 0 {
				t.Fatalf("parseRetryAfter(%q) = %v for a value that is neither seconds nor a date", v, got)
			}
			return
		}
		if want := min(max(at.Sub(now), 0), MaxRetryAfter); got != want {
			t.Fatalf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	})
}

// FuzzContentType: a header that names a type is kept as the type; a
// missing or octet-stream one is replaced by the sniffed type; the page is
// HTML exactly when the type's media type is text/html or
// application/xhtml+xml.
func FuzzContentType(f *testing.F) {
	for _, c := range []struct{ header, head string }{
		{"text/html; charset=utf-8", ""}, {"TEXT/HTML", ""}, {"application/xhtml+xml", ""}, {"text/html;;;=", ""},
		{"", "<!DOCTYPE html><p>"}, {"application/octet-stream", "%PDF-1.4"}, {"", "\x89PNG\r\n\x1a\n"},
		{"text/plain", "<html>"}, {" ; charset=gbk", "<html>"}, {"*/*", "<b>"}, {"text/htmlx", ""}, {"", ""},
		{"text/html\x00", ""}, {"\u00a0text/html", ""},
	} {
		f.Add(c.header, []byte(c.head))
	}
	f.Fuzz(func(t *testing.T, header string, head []byte) {
		ctype, html := contentType(header, head)
		media := strings.ToLower(strings.TrimSpace(strings.SplitN(ctype, ";", 2)[0]))
		if want := media == "text/html" || media == "application/xhtml+xml"; html != want {
			t.Fatalf("contentType(%q, %q) = %q, HTML %v; want HTML %v", header, head, ctype, html, want)
		}
		if html != IsHTML(ctype) {
			t.Fatalf("contentType says HTML %v, IsHTML(%q) says %v", html, ctype, IsHTML(ctype))
		}
		if needsSniff(header) {
			if want := http.DetectContentType(head[:min(len(head), sniffLen)]); ctype != want {
				t.Fatalf("contentType(%q, …) = %q, want the sniffed %q", header, ctype, want)
			}
		} else if ctype != header {
			t.Fatalf("contentType(%q, …) = %q, want the header kept", header, ctype)
		}
	})
}

// FuzzDecodeContent: whatever the bytes and the Content-Encoding, decoding
// never yields more than the limit, fails only with a reason, and gives
// identity bodies back unchanged.
func FuzzDecodeContent(f *testing.F) {
	page := []byte("<html><body>" + strings.Repeat("fuzz ", 100) + "</body></html>")
	for _, c := range []string{"gzip", "deflate", "raw-deflate", "br"} {
		coding := c
		if c == "raw-deflate" {
			coding = "deflate"
		}
		f.Add(coding, compress(f, c, page))
		f.Add(coding, compress(f, c, make([]byte, 64<<10))) // expands well past the limit
	}
	f.Add("gzip, br", compress(f, "br", compress(f, "gzip", page)))
	f.Add("identity", page)
	f.Add("", []byte("plain"))
	f.Add("zstd", []byte("x"))
	f.Add("gzip,gzip,gzip,gzip", []byte{})
	const limit = 4096
	f.Fuzz(func(t *testing.T, encoding string, data []byte) {
		r, err := decodeContent(bytes.NewReader(data), []string{encoding}, limit)
		var out []byte
		if err == nil {
			out, err = readLimited(r, limit)
		}
		identity := isIdentity(encoding)
		if err != nil {
			if identity && len(data) <= limit {
				t.Fatalf("an identity body of %d bytes failed: %v", len(data), err)
			}
			return
		}
		if len(out) > limit {
			t.Fatalf("decoded %d bytes past the %d-byte limit", len(out), limit)
		}
		if identity && !bytes.Equal(out, data) {
			t.Fatalf("identity body changed")
		}
	})
}

// isIdentity reports a Content-Encoding that leaves the body as it is.
func isIdentity(encoding string) bool {
	for c := range strings.SplitSeq(encoding, ",") {
		if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
			return false
		}
	}
	return true
}
