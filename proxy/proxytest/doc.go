// Package proxytest starts real proxies on loopback for tests and
// benchmarks: a healthy HTTP forward proxy (with CONNECT), one that wants
// credentials, one that refuses one target host, a transparent one, a
// SOCKS5 one, a listener that stalls, one that answers garbage, and a
// closed port. Each counts what reaches it, so a test can say how many
// requests went through which proxy; the HTTP ones mark what they forward
// with the ProxiedBy header, so a site can count the requests that did not
// come through a proxy; and Close drops every connection at once, as a
// killed proxy process would.
package proxytest
