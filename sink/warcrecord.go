package sink

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/crawler-dev/crawler/fetch"
)

// warcDate is the form of WARC-Date.
const warcDate = "2006-01-02T15:04:05Z"

// field is one WARC header field.
type field struct{ name, value string }

var (
	buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzips   = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
)

func getBuffer() *bytes.Buffer {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= 4<<20 {
		buffers.Put(b)
	}
}

// appendRecord appends one WARC record, a gzip member of its own, to out.
func appendRecord(out *bytes.Buffer, fields []field, block []byte) {
	gz := gzips.Get().(*gzip.Writer)
	defer gzips.Put(gz)
	gz.Reset(out)
	head := getBuffer()
	defer putBuffer(head)
	head.WriteString("WARC/1.1\r\n")
	for _, f := range fields {
		head.WriteString(f.name + ": " + f.value + "\r\n")
	}
	head.WriteString("Content-Length: " + strconv.Itoa(len(block)) + "\r\n\r\n")
	_, _ = gz.Write(head.Bytes()) // writes to a bytes.Buffer do not fail
	_, _ = gz.Write(block)
	_, _ = gz.Write([]byte("\r\n\r\n"))
	_ = gz.Close()
}

// appendWarcinfo appends a file's warcinfo record and returns its ID.
func appendWarcinfo(out *bytes.Buffer, filename, host string, now time.Time) string {
	id := recordID()
	info := "software: crawler (github.com/crawler-dev/crawler)\r\n" +
		"format: WARC File Format 1.1\r\n" +
		"conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n" +
		"hostname: " + host + "\r\n"
	appendRecord(out, []field{{"WARC-Type", "warcinfo"}, {"WARC-Record-ID", id}, {"WARC-Date", now.Format(warcDate)},
		{"WARC-Filename", filename}, {"Content-Type", "application/warc-fields"}}, []byte(info))
	return id
}

// appendExchange appends the response record of an exchange, then its
// request record (concurrent to the response).
func appendExchange(out *bytes.Buffer, e *fetch.Exchange, now time.Time) {
	at := e.At
	if at.IsZero() {
		at = now
	}
	date := at.Format(warcDate)
	respID := recordID()
	head := responseHead(e)
	block := make([]byte, 0, len(head)+len(e.Body))
	block = append(append(block, head...), e.Body...)
	appendRecord(out, []field{{"WARC-Type", "response"}, {"WARC-Record-ID", respID}, {"WARC-Date", date},
		{"WARC-Target-URI", e.URL}, {"Content-Type", "application/http;msgtype=response"},
		{"WARC-Block-Digest", digest(block)}, {"WARC-Payload-Digest", digest(e.Body)}}, block)
	req := requestHead(e)
	appendRecord(out, []field{{"WARC-Type", "request"}, {"WARC-Record-ID", recordID()}, {"WARC-Date", date},
		{"WARC-Target-URI", e.URL}, {"WARC-Concurrent-To", respID}, {"Content-Type", "application/http;msgtype=request"},
		{"WARC-Block-Digest", digest(req)}}, req)
}

// responseHead is the answer's status line and header. The body kept is
// the one sent less its Content-Encoding and chunking: when an encoding
// was undone, Content-Encoding goes, and Content-Length says the length
// kept, so that the record reads back as a whole answer.
func responseHead(e *fetch.Exchange) []byte {
	h := e.Header.Clone()
	if e.Encoded || (h.Get("Content-Length") != "" && h.Get("Content-Length") != strconv.Itoa(len(e.Body))) {
		h.Del("Content-Encoding")
		h.Set("Content-Length", strconv.Itoa(len(e.Body)))
	}
	h.Del("Transfer-Encoding")
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\r\n", proto(e.Proto), e.Status)
	writeHeader(&b, h)
	return b.Bytes()
}

// requestHead is the request line and header sent.
func requestHead(e *fetch.Exchange) []byte {
	target, host := "/", e.Host
	if u, err := url.Parse(e.URL); err == nil {
		target = u.RequestURI()
		if host == "" {
			host = u.Host
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s\r\nHost: %s\r\n", e.Method, target, proto(e.Proto), host)
	writeHeader(&b, e.RequestHeader)
	return b.Bytes()
}

// proto is the protocol of the status and request lines.
func proto(p string) string {
	if p == "" {
		return "HTTP/1.1"
	}
	return p
}

// writeHeader writes h, names sorted, and the empty line that ends it.
func writeHeader(b *bytes.Buffer, h http.Header) {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range h[n] {
			b.WriteString(n + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
}

// digest is a WARC digest: "sha1:" and the SHA-1 in base 32.
func digest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// recordID is a new WARC-Record-ID, a random UUID.
func recordID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}
