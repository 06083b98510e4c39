package fetch

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// publicOnly is a net.Dialer Control function that refuses connections to
// non-public addresses. It runs after DNS resolution, on the address actually
// dialled, so a host that resolves to 127.0.0.1 is caught too.
func publicOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	if !isPublic(ip) {
		return fmt.Errorf("dial %s: %w", address, ErrBlockedAddress)
	}
	return nil
}

func isPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		ip.IsInterfaceLocalMulticast() || sharedAddressSpace.Contains(ip))
}

// sharedAddressSpace is RFC 6598 carrier-grade NAT space, private in practice.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")
