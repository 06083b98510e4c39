package jobspec

import (
	"strings"
	"testing"
)

// TestRequestSpec_RoutesByHost: auto routes by host up to
// HostRoutingMaxRPS (the default rate included) and by URL above it;
// host and url say so whatever the rate.
func TestRequestSpec_RoutesByHost(t *testing.T) {
	for _, tc := range []struct {
		lines string
		want  bool
	}{
		{"", true}, // per_host_rps 0: Crawl-delay or 5/s
		{"per_host_rps: 20\n", true},
		{"per_host_rps: 20.5\n", false},
		{"routing: auto\nper_host_rps: 1000\n", false},
		{"routing: host\nper_host_rps: 1000\n", true},
		{"routing: url\n", false},
	} {
		spec, err := Parse(strings.NewReader(minimalJob + tc.lines))
		if err != nil {
			t.Fatalf("%q: %v", tc.lines, err)
		}
		if got := spec.RoutesByHost(); got != tc.want {
			t.Errorf("%q: RoutesByHost = %v, want %v", tc.lines, got, tc.want)
		}
	}
}
