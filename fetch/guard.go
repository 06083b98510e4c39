package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// publicOnly is a net.Dialer Control function that refuses connections to
// non-public addresses. It runs after DNS resolution, on the address actually
// dialled, so a host that resolves to 127.0.0.1 is caught too.
func publicOnly(_, address string, _ syscall.RawConn) error {
	return checkDial(address, false)
}

// privateAllowed is the Control function for jobs with
// allow_private_networks: loopback and private addresses pass, link-local
// and cloud-metadata addresses do not.
func privateAllowed(_, address string, _ syscall.RawConn) error {
	return checkDial(address, true)
}

func checkDial(address string, allowPrivate bool) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	if err := refusal(ip, allowPrivate); err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	return nil
}

// refusal is why a job may not connect to ip, or nil when it may: an
// error that is ErrBlockedAddress, whose text names the rule that refuses
// the address.
func refusal(ip netip.Addr, allowPrivate bool) error {
	switch {
	case allowed(ip, allowPrivate):
		return nil
	case isMetadata(ip):
		return errMetadataAddress
	}
	return ErrBlockedAddress
}

// allowed reports whether a job may connect to ip.
func allowed(ip netip.Addr, allowPrivate bool) bool {
	if allowPrivate {
		return !isMetadata(ip)
	}
	return isPublic(ip)
}

func isPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	if v4, ok := nat64Embedded(ip); ok {
		return isPublic(v4)
	}
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		ip.IsInterfaceLocalMulticast() || sharedAddressSpace.Contains(ip))
}

// isMetadata reports the addresses no job may reach, private or not:
// link-local ones (169.254.0.0/16 holds most clouds' metadata service) and
// the metadata services outside it.
func isMetadata(ip netip.Addr) bool {
	ip = ip.Unmap()
	if v4, ok := nat64Embedded(ip); ok {
		return isMetadata(v4)
	}
	if ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
		return true
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}

// metadataAddrs are cloud metadata services outside link-local space.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// sharedAddressSpace is RFC 6598 carrier-grade NAT space, private in practice.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// nat64 is the well-known NAT64 prefix (RFC 6052): its addresses reach the
// IPv4 address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

func nat64Embedded(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() || !nat64.Contains(ip) {
		return netip.Addr{}, false
	}
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[12:])), true
}

// checkTarget resolves host and checks every address it has, for requests
// that go through a proxy (the dialer's Control only sees the proxy).
func checkTarget(ctx context.Context, host string, allowPrivate bool) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := refusal(ip, allowPrivate); err != nil {
			return fmt.Errorf("target %s: %w", host, err)
		}
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve target: %w", err)
	}
	for _, ip := range addrs {
		if err := refusal(ip, allowPrivate); err != nil {
			return fmt.Errorf("target %s (%s): %w", host, ip, err)
		}
	}
	return nil
}

// CheckHost applies the address guard to a request that this package does
// not send (a rendered page's own requests, sent by the browser): every
// address host resolves to must be one the job may reach. The error wraps
// ErrBlockedAddress when one is not. The browser resolves the name again,
// so unlike Fetcher's direct requests this check does not stop DNS
// rebinding.
func CheckHost(ctx context.Context, host string, allowPrivate bool) error {
	return checkTarget(ctx, host, allowPrivate)
}

// DialControl is the address guard as a net.Dialer Control function, for
// connections this package does not make (the master's webhooks): it
// refuses non-public addresses, or with allowPrivate only link-local and
// cloud-metadata ones. It runs on the address dialled, after DNS, so a
// name that resolves to 127.0.0.1 is refused too. The error wraps
// ErrBlockedAddress.
func DialControl(allowPrivate bool) func(network, address string, c syscall.RawConn) error {
	if allowPrivate {
		return privateAllowed
	}
	return publicOnly
}
