package fetch

import (
	"net/http"
	"time"
)

// Exchange is one request and its answer as they went over the wire, for
// an archive: what a WARC request and response record hold.
type Exchange struct {
	// Method, URL and Proto are the request line (Proto the answer's,
	// "HTTP/1.1" or "HTTP/2.0"); Host the Host it was sent to.
	Method, URL, Host, Proto string
	// RequestHeader is the header sent (cookies and proxy headers the
	// transport adds are not in it).
	RequestHeader http.Header
	// Status is the answer's status line after the protocol ("200 OK"),
	// Header its header as sent.
	Status string
	Header http.Header
	// Body is the body as sent, less its Content-Encoding (gzip, br,
	// deflate) and transfer chunking: not charset-decoded. Encoded says
	// whether a Content-Encoding was undone.
	Body    []byte
	Encoded bool
	// At is when the answer's header arrived.
	At time.Time
}

// exchangeOf is the exchange of an answer whose body, decompressed, is
// body (shared, not copied: charset decoding makes a copy of its own).
func exchangeOf(resp *http.Response, body []byte) *Exchange {
	r := resp.Request
	return &Exchange{Method: r.Method, URL: r.URL.String(), Host: r.Host, Proto: resp.Proto,
		RequestHeader: r.Header.Clone(), Status: resp.Status, Header: resp.Header.Clone(), Body: body,
		Encoded: resp.Header.Get("Content-Encoding") != "", At: time.Now().UTC()}
}
