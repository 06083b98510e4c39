package fetch

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/publicsuffix"

	"github.com/crawler-dev/crawler/cluster"
)

// Request is one page to fetch and the job's settings for it. Every zero
// value is a sensible default.
type Request struct {
	// URL is the page's absolute http or https URL.
	URL string
	// AllowPrivate permits loopback and private addresses (the job's
	// allow_private_networks). Link-local and cloud-metadata addresses
	// stay blocked.
	AllowPrivate bool

	// UserAgent is the User-Agent header; "" sends Options.UserAgent
	// (by default DefaultUserAgent).
	UserAgent string
	// Headers are sent as given, after User-Agent, Accept and
	// Accept-Encoding, so they may replace those. Host, Content-Length and
	// the hop-by-hop headers (Connection, Transfer-Encoding, ...) are
	// refused: see ValidateHeaders. Nil sends none.
	Headers map[string]string
	// Jar keeps cookies between requests: pass one jar per job (NewJar) to
	// keep its session. Nil neither sends nor keeps cookies.
	Jar http.CookieJar
	// MaxBodyBytes bounds the body, as sent and once decompressed; 0 takes
	// Options.MaxBodyBytes.
	MaxBodyBytes int64
	// TruncateBody makes a body longer than MaxBodyBytes (as sent or once
	// decompressed) the page's first MaxBodyBytes, with Page.Truncated,
	// where it would fail with ErrTooLarge: for a file whose beginning is
	// of use alone (a sitemap).
	TruncateBody bool
	// Timeout bounds the request, redirects and body included; 0 takes
	// Options.Timeout.
	Timeout time.Duration
	// KeepExchange keeps what went over the wire with the page
	// (Page.Exchange), for an archive (a WARC sink). Off, nothing more is
	// kept.
	KeepExchange bool
	// AllowNonHTML returns a 2xx answer that is not HTML as a Page (raw
	// body, not charset-decoded, Page.HTML false). False fails it with
	// ErrNotHTML without downloading the body.
	AllowNonHTML bool

	// OneHop makes the request exactly one request on the wire, for a
	// caller that keeps rules per request (its host's budget, robots.txt):
	// no redirect is followed (a 3xx answer with a Location comes back as
	// a Page whose Redirect is the target, resolved against URL, with no
	// body, for the caller to request as a page of its own), and the
	// Transport does not send the request again on its own when the
	// connection it reused broke (the caller retries it, through its
	// rules). Without it, redirects are followed within the request, up
	// to Options.MaxRedirects, to the hosts AllowHost accepts.
	OneHop bool

	// AllowHost decides which hosts a redirect may lead to; it gets the
	// lowercase host name without port. A refused hop is not followed and
	// the fetch fails with ErrOffsiteRedirect. Nil allows any host. The
	// first URL is not checked: that is the caller's choice.
	AllowHost func(host string) bool

	// Proxy sends the request through a proxy: http, https or socks5
	// (socks5h too), with user:pass credentials if it needs them. Nil
	// connects directly. The proxy itself may be on a private address; the
	// target host must still pass the address guard: it is resolved here
	// and every address checked before the request is sent, and the proxy
	// then resolves it again on its own (so the proxy's own network policy
	// is the last line against a DNS answer that changes in between).
	Proxy *url.URL

	// Method is the request's method; "" is GET. Body is sent with it (a
	// rendered page's POST from script); nil sends none. A page to crawl
	// is always a GET.
	Method string
	Body   []byte

	// Validators are the page's stored ETag and Last-Modified: sent as
	// If-None-Match and If-Modified-Since, so that an unchanged page
	// answers 304 (Page.NotModified). Zero sends neither.
	Validators Validators
}

// refusedHeaders may not be set through Request.Headers, with the reason.
var refusedHeaders = map[string]string{
	"Host":                "the URL decides it",
	"Content-Length":      "the body decides it",
	"Transfer-Encoding":   "the transport decides it",
	"Connection":          "it is hop-by-hop",
	"Keep-Alive":          "it is hop-by-hop",
	"Proxy-Connection":    "it is hop-by-hop",
	"Te":                  "it is hop-by-hop",
	"Trailer":             "it is hop-by-hop",
	"Upgrade":             "it is hop-by-hop",
	"Proxy-Authorization": "it comes from Request.Proxy",
}

// ValidateHeaders checks headers meant for Request.Headers: valid names and
// values, and none that the fetcher owns (Host, Content-Length,
// Transfer-Encoding, Connection and the other hop-by-hop headers,
// Proxy-Authorization). The error is a *cluster.FieldError for field
// "Headers" naming the header.
func ValidateHeaders(headers map[string]string) error {
	for name, value := range headers {
		canon := http.CanonicalHeaderKey(name)
		if why, ok := refusedHeaders[canon]; ok {
			return cluster.Invalid("Headers", canon, "cannot be set per job: %s", why)
		}
		if !httpguts.ValidHeaderFieldName(name) {
			return cluster.Invalid("Headers", fmt.Sprintf("%q", name), "is not a valid header name")
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return cluster.Invalid("Headers", canon, "has a value with control characters")
		}
	}
	return nil
}

// Validate reports why the request cannot be sent, or nil. The error wraps
// ErrInvalidRequest and a *cluster.FieldError naming the field; it never
// shows proxy credentials.
func (r Request) Validate() error {
	err := r.validate()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

func (r Request) validate() error {
	if _, err := targetURL(r.URL); err != nil {
		return err
	}
	if err := ValidateHeaders(r.Headers); err != nil {
		return err
	}
	switch {
	case r.MaxBodyBytes < 0:
		return cluster.Invalid("MaxBodyBytes", r.MaxBodyBytes, "is negative")
	case r.Timeout < 0:
		return cluster.Invalid("Timeout", r.Timeout, "is negative")
	case r.Method != "" && !validMethod(r.Method):
		return cluster.Invalid("Method", r.Method, "is not an HTTP method")
	}
	return validateProxy(r.Proxy)
}

// targetURL parses an absolute http(s) URL.
func targetURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, cluster.Invalid("URL", fmt.Sprintf("%q", raw), "does not parse: %v", err)
	}
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Hostname() == "" {
		return nil, cluster.Invalid("URL", fmt.Sprintf("%q", raw), "is not an absolute http(s) URL")
	}
	return u, nil
}

func validateProxy(p *url.URL) error {
	if p == nil {
		return nil
	}
	switch p.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return cluster.Invalid("Proxy", redactProxy(p), "has scheme %q; want http, https or socks5", p.Scheme)
	}
	if p.Hostname() == "" {
		return cluster.Invalid("Proxy", redactProxy(p), "has no host")
	}
	return nil
}

// redactProxy shows a proxy without its credentials: scheme://host:port.
func redactProxy(p *url.URL) string {
	return (&url.URL{Scheme: p.Scheme, Host: p.Host}).String()
}

// proxySecrets lists the strings of p's credentials that must never be
// shown, raw and escaped.
func proxySecrets(p *url.URL) []string {
	if p == nil || p.User == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	user := p.User.Username()
	pass, _ := p.User.Password()
	add(user)
	add(pass)
	add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))) // Proxy-Authorization
	// Longest first, so that a secret inside another is not left half shown.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// NewJar returns an empty cookie jar that keeps cookies the way browsers
// do, with the public suffix list (a site cannot set a cookie for
// "com.cn"). Give each job its own.
func NewJar() *cookiejar.Jar {
	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // never fails
	return jar
}

// validMethod reports whether m is a method a page's script may send.
func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}
