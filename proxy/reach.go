package proxy

import (
	"net/netip"
	"strings"
)

// reasonJudgeUnreachable is the reason a proxy that cannot reach the judge
// shows in `crawler client proxies --all` while it waits, unchecked.
const reasonJudgeUnreachable = "judge unreachable from proxy: set --proxy-judge-url or --proxy-check-url"

// unreachable reports whether proxy p cannot reach the judge, by a rule
// that needs no network: the checks go to a judge (not a plain CheckURL,
// which is the operator's own choice) whose host is a loopback or
// unspecified address (127.0.0.0/8, ::1, localhost, 0.0.0.0, ::), and p's
// host is not a loopback address. A proxy elsewhere that connects to
// "127.0.0.1" reaches itself, not us, so its check could only fail, and
// blaming it would bury every proxy of a remote list within a few rounds.
// Host names other than localhost are not resolved: a proxy named by a
// name counts as remote.
func (c *checker) unreachable(p Proxy) bool {
	if !c.judge || !isLocalHost(c.target.Hostname(), true) {
		return false
	}
	return !isLocalHost(p.URL().Hostname(), false)
}

// isLocalHost reports whether host is a loopback address or localhost
// (with unspecified, also 0.0.0.0 or ::, which a listener's own URL may
// name).
func isLocalHost(host string, unspecified bool) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || (unspecified && ip.IsUnspecified())
}
