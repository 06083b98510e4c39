// Package hostguard is the DNS-rebinding defence of the crawler's HTTP
// listeners (the master's status page, every process's metrics and
// profiles): a request whose Host header does not name the listener is
// answered 421. A page of another site whose name an attacker rebinds to
// 127.0.0.1 reaches the listener from the operator's browser with its own
// name in Host, and is refused, so it cannot read /api/status, /metrics
// or /debug/pprof/cmdline (which holds the process's command line).
package hostguard
