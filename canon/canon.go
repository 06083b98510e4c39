package canon

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/idna"
)

// ErrUnsupportedURL is returned for URLs that cannot be canonicalized: a
// scheme other than http or https, no host, or a malformed host or port.
var ErrUnsupportedURL = errors.New("unsupported url")

var defaultPorts = map[string]string{"http": "80", "https": "443"}

// URL returns the canonical form of an absolute http or https URL,
// following w3lib's canonicalize_url: scheme and host lowercased, an IDN host
// in punycode, the default port dropped, query arguments sorted by key and
// then value (blank values and repeated keys kept), the fragment dropped,
// percent-encoding normalised (needlessly encoded unreserved characters
// decoded, hex digits uppercased, non-ASCII encoded), dot segments removed
// and an empty path made "/".
func URL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("canonicalize: %w", err)
	}
	return canonical(u)
}

// Ref resolves ref (absolute or relative, as found in an href) against base
// and returns the canonical form of the result.
func Ref(base *url.URL, ref string) (string, error) {
	if base == nil {
		return "", fmt.Errorf("canonicalize %q: %w: no base url", ref, ErrUnsupportedURL)
	}
	u, err := base.Parse(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("canonicalize: %w", err)
	}
	return canonical(u)
}

func canonical(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if _, ok := defaultPorts[scheme]; !ok {
		return "", fmt.Errorf("canonicalize %q: %w: scheme %q is not http or https", u.Redacted(), ErrUnsupportedURL, u.Scheme)
	}
	host, err := canonicalHost(scheme, u.Host)
	if err != nil {
		return "", fmt.Errorf("canonicalize %q: %w", u.Redacted(), err)
	}
	var b strings.Builder
	b.WriteString(scheme + "://")
	if u.User != nil {
		b.WriteString(u.User.String() + "@")
	}
	b.WriteString(host)
	b.WriteString(canonicalPath(u.EscapedPath()))
	if q := canonicalQuery(u.RawQuery); q != "" {
		b.WriteString("?" + q)
	}
	return b.String(), nil
}

// canonicalHost lowercases the host, converts an IDN to punycode and drops
// the scheme's default port.
func canonicalHost(scheme, hostport string) (string, error) {
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.Contains(hostport[i:], "]") {
		host, port = hostport[:i], hostport[i+1:]
	}
	if host == "" {
		return "", fmt.Errorf("%w: no host", ErrUnsupportedURL)
	}
	if port != "" && strings.Trim(port, "0123456789") != "" {
		return "", fmt.Errorf("%w: bad port %q", ErrUnsupportedURL, port)
	}
	port = strings.TrimLeft(port, "0")
	if port == defaultPorts[scheme] {
		port = ""
	}
	host, err := asciiHost(host)
	if err != nil {
		return "", err
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

func asciiHost(host string) (string, error) {
	if strings.HasPrefix(host, "[") {
		return strings.ToLower(host), nil
	}
	if net.ParseIP(host) != nil {
		return host, nil
	}
	if h, err := url.PathUnescape(host); err == nil {
		host = h
	}
	ascii, err := idna.Lookup.ToASCII(strings.ToLower(host))
	if err != nil {
		return "", fmt.Errorf("%w: host %q: %v", ErrUnsupportedURL, host, err)
	}
	if ascii == "" { // "xn--" converts to nothing, without an error
		return "", fmt.Errorf("%w: host %q is empty in ASCII", ErrUnsupportedURL, host)
	}
	return ascii, nil
}

// canonicalPath normalises the percent-encoding of an escaped path and
// removes its dot segments.
func canonicalPath(escaped string) string {
	p := removeDotSegments(normalizeEscapes(escaped, pathChar))
	if p == "" {
		return "/"
	}
	return p
}

// canonicalQuery sorts the query's arguments by key, then value, keeping
// blank values and repeated keys; "k" becomes "k=" as in w3lib.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type arg struct{ k, v string }
	var args []arg
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		args = append(args, arg{normalizeEscapes(k, queryChar), normalizeEscapes(v, queryChar)})
	}
	sort.SliceStable(args, func(i, j int) bool {
		if args[i].k != args[j].k {
			return args[i].k < args[j].k
		}
		return args[i].v < args[j].v
	})
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.k + "=" + a.v
	}
	return strings.Join(parts, "&")
}
