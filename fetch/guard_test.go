package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// These tests call the guard directly: a guard that failed would otherwise
// send traffic to a metadata address, which tests must never do.
func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		addr                string
		public, withPrivate bool
	}{
		{"8.8.8.8", true, true},
		{"2606:4700::1111", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"10.1.2.3", false, true},
		{"192.168.0.10", false, true},
		{"fd12:3456::1", false, true},
		{"100.64.0.1", false, true},
		{"169.254.169.254", false, false}, // AWS, GCP, Azure metadata
		{"169.254.0.1", false, false},
		{"fe80::1", false, false},
		{"fe80::a9fe:a9fe", false, false},
		{"fd00:ec2::254", false, false},   // AWS metadata over IPv6
		{"100.100.100.200", false, false}, // Alibaba Cloud metadata
		{"::ffff:169.254.169.254", false, false},
		{"::ffff:100.100.100.200", false, false},
		{"64:ff9b::169.254.169.254", false, false}, // through NAT64
		{"64:ff9b::127.0.0.1", false, true},
		{"64:ff9b::8.8.8.8", true, true},
		{"fd00:ec2::253", false, true},
	} {
		ip := netip.MustParseAddr(tc.addr)
		if got := allowed(ip, false); got != tc.public {
			t.Errorf("allowed(%s, private off) = %v, want %v", tc.addr, got, tc.public)
		}
		if got := allowed(ip, true); got != tc.withPrivate {
			t.Errorf("allowed(%s, private on) = %v, want %v", tc.addr, got, tc.withPrivate)
		}
	}
}

func TestPrivateAllowed(t *testing.T) {
	for _, tc := range []struct {
		address string
		blocked bool
	}{
		{"127.0.0.1:80", false},
		{"[::1]:443", false},
		{"10.0.0.1:8080", false},
		{"169.254.169.254:80", true},
		{"[fe80::1%eth0]:80", true},
		{"[fd00:ec2::254]:80", true},
		{"100.100.100.200:80", true},
	} {
		err := privateAllowed("tcp", tc.address, nil)
		if got := errors.Is(err, ErrBlockedAddress); got != tc.blocked || (!tc.blocked && err != nil) {
			t.Errorf("privateAllowed(%s) = %v; want blocked %v", tc.address, err, tc.blocked)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		host         string
		allowPrivate bool
		blocked      bool
	}{
		{"127.0.0.1", false, true},
		{"127.0.0.1", true, false},
		{"localhost", false, true}, // resolves to loopback only
		{"localhost", true, false},
		{"169.254.169.254", true, true},
		{"fd00:ec2::254", true, true},
		{"100.100.100.200", true, true},
		{"8.8.8.8", false, false},
	} {
		err := checkTarget(ctx, tc.host, tc.allowPrivate)
		if got := errors.Is(err, ErrBlockedAddress); got != tc.blocked || (!tc.blocked && err != nil) {
			t.Errorf("checkTarget(%s, private %v) = %v; want blocked %v", tc.host, tc.allowPrivate, err, tc.blocked)
		}
		if refusal := AddressRefusal(fmt.Errorf("fetch: %w", err)); tc.blocked && (refusal == nil || !strings.HasSuffix(err.Error(), refusal.Error())) {
			t.Errorf("AddressRefusal(%v) = %v, want the guard's refusal alone", err, refusal)
		}
		if err != nil && tc.allowPrivate != strings.Contains(err.Error(), "metadata") {
			t.Errorf("checkTarget(%s, private %v) = %v; want the metadata rule named when allow_private_networks is set, the setting named when not",
				tc.host, tc.allowPrivate, err)
		}
	}
}
