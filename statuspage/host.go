package statuspage

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
)

// checkHost answers 421 to a request whose Host header does not name this
// page: an IP address, localhost, the listen address's host, this
// machine's host name or one of opts.AllowedHosts. A page of another site
// whose name is rebound to our address (DNS rebinding) sends its own name
// and is refused, so it cannot read /api/status.
func checkHost(next http.Handler, opts Options) http.Handler {
	allowed := map[string]bool{"localhost": true}
	if h, _, err := net.SplitHostPort(opts.Addr); err == nil && h != "" {
		allowed[normalHost(h)] = true
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		allowed[normalHost(h)] = true
	}
	for _, h := range opts.AllowedHosts {
		allowed[normalHost(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = normalHost(host)
		if _, err := netip.ParseAddr(host); err != nil && !allowed[host] && !strings.HasSuffix(host, ".localhost") {
			http.Error(w, "this status page does not answer to the host name "+host+
				" (allow it with the status page's allowed hosts, e.g. --http-host "+host+")", http.StatusMisdirectedRequest)
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
