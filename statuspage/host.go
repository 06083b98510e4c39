package statuspage

import (
	"net/http"

	"github.com/crawler-dev/crawler/internal/hostguard"
)

// checkHost answers 421 to a request whose Host header does not name this
// page: an IP address, localhost, the listen address's host, this
// machine's host name or one of opts.AllowedHosts. A page of another site
// whose name is rebound to our address (DNS rebinding) sends its own name
// and is refused, so it cannot read /api/status.
func checkHost(next http.Handler, opts Options) http.Handler {
	return hostguard.Handler(next, hostguard.Options{Addr: opts.Addr, Allowed: opts.AllowedHosts,
		Refusal: func(host string) string {
			return "this status page does not answer to the host name " + host +
				" (allow it with the status page's allowed hosts, e.g. --http-host " + host + ")"
		}})
}
