package hostguard

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
)

// Options say which Host headers a listener answers.
type Options struct {
	// Addr is the listen address; its host is allowed.
	Addr string
	// Allowed are host names allowed besides IP addresses, localhost
	// (and *.localhost), Addr's host and this machine's host name.
	Allowed []string
	// Refusal is the body of the 421 answer to a request for host; it
	// should say how to allow that name.
	Refusal func(host string) string
}

// Handler answers 421 Misdirected Request to a request whose Host does
// not name the listener (see Options) and passes the others to next.
func Handler(next http.Handler, opts Options) http.Handler {
	allowed := map[string]bool{"localhost": true}
	if h, _, err := net.SplitHostPort(opts.Addr); err == nil && h != "" {
		allowed[normalHost(h)] = true
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		allowed[normalHost(h)] = true
	}
	for _, h := range opts.Allowed {
		allowed[normalHost(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = normalHost(host)
		if _, err := netip.ParseAddr(host); err != nil && !allowed[host] && !strings.HasSuffix(host, ".localhost") {
			http.Error(w, opts.Refusal(host), http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// normalHost is a host name in lower case, without brackets or a
// trailing dot.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}
