package proxy

import (
	"net/http"
	"time"
)

// Kind is what a real request through a proxy came to, as far as the
// proxy is concerned.
type Kind string

// The outcome kinds.
const (
	// KindOK: the request went through; its latency feeds the score.
	KindOK Kind = "ok"
	// KindTimeout: the request timed out. The score drops and the proxy
	// cools down for a while; only a streak of timeouts evicts it, so one
	// slow answer does not cost a good proxy its place.
	KindTimeout Kind = "timeout"
	// KindProxyFault: the proxy refused the connection, asked for
	// credentials (407) or answered garbage. It leaves the usable set at
	// once and the validator checks it again after a backoff.
	KindProxyFault Kind = "proxy"
	// KindBanned: the target answered 403 or 429 or a ban page. The proxy
	// is banned for that host only, for a while.
	KindBanned Kind = "ban"
	// KindTargetFault: the target failed (5xx, a bad page); not the
	// proxy's fault. Only the slot is released.
	KindTargetFault Kind = "target"
)

// Outcome is a real request's result, reported with Pool.Report.
type Outcome struct {
	// Kind classifies the result.
	Kind Kind
	// Latency is the request's duration (KindOK).
	Latency time.Duration
	// BanFor is how long a KindBanned proxy is kept off the host; zero
	// means PoolOptions.Ban.
	BanFor time.Duration
	// Reason is recorded with an eviction, e.g. "connection refused". It
	// must not contain credentials.
	Reason string
}

// Success is a request that went through in latency.
func Success(latency time.Duration) Outcome { return Outcome{Kind: KindOK, Latency: latency} }

// Timeout is a request that timed out.
func Timeout() Outcome { return Outcome{Kind: KindTimeout, Reason: "timeouts"} }

// ProxyFault is a proxy that refused, asked for credentials or answered
// garbage; reason says which.
func ProxyFault(reason string) Outcome { return Outcome{Kind: KindProxyFault, Reason: reason} }

// Banned is a proxy the target host refused (403, 429, a ban page); d zero
// means the pool's default ban.
func Banned(d time.Duration) Outcome { return Outcome{Kind: KindBanned, BanFor: d} }

// TargetFault is a failure of the target, not of the proxy.
func TargetFault() Outcome { return Outcome{Kind: KindTargetFault} }

// StatusOutcome classifies an HTTP status received through a proxy: 407 is
// the proxy's fault, 403 and 429 ban the proxy for the host, other 4xx and
// 5xx are the target's, anything else is a success in latency.
func StatusOutcome(status int, latency time.Duration) Outcome {
	switch {
	case status == http.StatusProxyAuthRequired:
		return ProxyFault("proxy authentication required (407)")
	case status == http.StatusForbidden || status == http.StatusTooManyRequests:
		return Banned(0)
	case status >= 400:
		return TargetFault()
	}
	return Success(latency)
}
