package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// ID identifies a proxy in Redis: the first 16 hex digits of the SHA-256 of
// its full URL, credentials included. Two lines naming the same host with
// different credentials are two proxies; the credentials never appear in a
// key or a member.
type ID string

// Scheme names how the crawler talks to a proxy.
type Scheme string

// The proxy schemes a source may list.
const (
	// HTTP is a plain-text HTTP forward proxy (CONNECT for https targets).
	HTTP Scheme = "http"
	// HTTPS is an HTTP forward proxy reached over TLS.
	HTTPS Scheme = "https"
	// SOCKS5 is a SOCKS5 proxy; it always tunnels.
	SOCKS5 Scheme = "socks5"
)

// ErrBadProxy is wrapped by every error Parse returns.
var ErrBadProxy = errors.New("not a proxy")

// Proxy is one proxy: its URL, credentials included, and its ID. Its
// String, Redacted, GoString and MarshalText forms never show the
// credentials; only URL does, for the transport that needs them.
type Proxy struct {
	u  *url.URL
	id ID
}

// Parse reads scheme://[user:pass@]host:port with scheme http, https or
// socks5, or a bare host:port meaning http. A port is required.
func Parse(s string) (Proxy, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		// url's errors quote the input, credentials and all.
		return Proxy{}, fmt.Errorf("%w: unparsable URL", ErrBadProxy)
	}
	if err := checkURL(u); err != nil {
		return Proxy{}, err
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = net.JoinHostPort(strings.ToLower(u.Hostname()), u.Port())
	u.Path, u.RawPath = "", ""
	return Proxy{u: u, id: idOf(u)}, nil
}

func checkURL(u *url.URL) error {
	switch Scheme(strings.ToLower(u.Scheme)) {
	case HTTP, HTTPS, SOCKS5:
	default:
		return fmt.Errorf("%w: scheme %q is not http, https or socks5", ErrBadProxy, u.Scheme)
	}
	port, err := strconv.Atoi(u.Port())
	switch {
	case u.Hostname() == "":
		return fmt.Errorf("%w: no host", ErrBadProxy)
	case err != nil || port < 1 || port > 65535:
		return fmt.Errorf("%w: no port in 1..65535", ErrBadProxy)
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return fmt.Errorf("%w: a proxy URL has no path, query or fragment", ErrBadProxy)
	case u.User != nil && u.User.Username() == "":
		return fmt.Errorf("%w: empty user name", ErrBadProxy)
	}
	return nil
}

func idOf(u *url.URL) ID {
	sum := sha256.Sum256([]byte(u.String()))
	return ID(hex.EncodeToString(sum[:8]))
}

// ID returns the proxy's identity in Redis.
func (p Proxy) ID() ID { return p.id }

// IsZero reports whether p is the zero Proxy.
func (p Proxy) IsZero() bool { return p.u == nil }

// Scheme returns the proxy's scheme.
func (p Proxy) Scheme() Scheme {
	if p.u == nil {
		return ""
	}
	return Scheme(p.u.Scheme)
}

// Host returns the proxy's host:port.
func (p Proxy) Host() string {
	if p.u == nil {
		return ""
	}
	return p.u.Host
}

// HasCredentials reports whether the proxy URL carries a user name.
func (p Proxy) HasCredentials() bool { return p.u != nil && p.u.User != nil }

// URL returns a copy of the full URL, credentials included, for the
// transport (http.ProxyURL). Never log it.
func (p Proxy) URL() *url.URL {
	if p.u == nil {
		return nil
	}
	c := *p.u
	if p.u.User != nil {
		u := *p.u.User
		c.User = &u
	}
	return &c
}

// Redacted returns the URL with any credentials replaced by ***, e.g.
// http://***@10.0.0.1:3128: safe for logs, status output and metrics.
func (p Proxy) Redacted() string {
	if p.u == nil {
		return ""
	}
	c := url.URL{Scheme: p.u.Scheme, Host: p.u.Host}
	s := c.String()
	if p.u.User != nil {
		s = c.Scheme + "://***@" + c.Host
	}
	return s
}

// String returns Redacted.
func (p Proxy) String() string { return p.Redacted() }

// GoString returns Redacted, so %#v cannot print credentials either.
func (p Proxy) GoString() string { return "proxy.Proxy(" + p.Redacted() + ")" }

// MarshalText returns Redacted: a Proxy encoded as JSON or YAML shows no
// credentials.
func (p Proxy) MarshalText() ([]byte, error) { return []byte(p.Redacted()), nil }
