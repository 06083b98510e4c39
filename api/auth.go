package api

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// queryTokenNames are query parameters that would carry a token: refused,
// since URLs end up in logs, proxies and browser history.
var queryTokenNames = []string{"token", "access_token", "api_token", "api-token", "bearer", "auth", "authorization"}

// authorize checks the request may call an endpoint that writes or not;
// if not it writes the refusal and returns false.
func (a *API) authorize(w http.ResponseWriter, r *http.Request, write bool) bool {
	if name := queryToken(r); name != "" {
		writeError(w, http.StatusBadRequest, "a token in the query string ("+name+") is refused: send it as the header Authorization: Bearer TOKEN")
		return false
	}
	addr := limitKey(clientAddr(r))
	if wait := a.limiter.blocked(addr); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed authentications from %s; try again in %s", addr, wait.Round(time.Second)))
		return false
	}
	if a.deps.Tokens == nil {
		return a.authorizeOpen(w, r, write)
	}
	presented, ok := bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawler"`)
		writeError(w, http.StatusUnauthorized, "missing token: send the header Authorization: Bearer TOKEN")
		return false
	}
	role := a.deps.Tokens.Role(presented)
	switch {
	case role == RoleNone:
		a.limiter.fail(addr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawler", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "invalid token")
		return false
	case write && role < RoleWrite:
		writeError(w, http.StatusForbidden, "this token may only read: "+r.Method+" "+r.URL.Path+" needs a write token")
		return false
	}
	return true
}

// authorizeOpen is authorize without a token file: read-only, loopback
// callers only.
func (a *API) authorizeOpen(w http.ResponseWriter, r *http.Request, write bool) bool {
	if ip := net.ParseIP(clientAddr(r)); ip == nil || !ip.IsLoopback() {
		writeError(w, http.StatusForbidden, "without --api-tokens the API answers loopback callers only; "+
			"start the master with --api-tokens FILE to serve it to other hosts")
		return false
	}
	if write {
		writeError(w, http.StatusForbidden, "the API is read-only: start the master with --api-tokens FILE "+
			"holding a line `write TOKEN`, and send Authorization: Bearer TOKEN")
		return false
	}
	return true
}

// queryToken returns the name of a query parameter that carries a token.
func queryToken(r *http.Request) string {
	for name := range r.URL.Query() {
		for _, t := range queryTokenNames {
			if strings.EqualFold(name, t) {
				return name
			}
		}
	}
	return ""
}

// bearer returns the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// limitKey is what failures are counted by: the IPv4 address, or the
// /64 network of an IPv6 one (a host usually holds a whole /64, and
// could otherwise try from a fresh address each time).
func limitKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil || ip.To4() != nil {
		return addr
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// clientAddr is the IP address the request came from.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
