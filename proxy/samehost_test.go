package proxy

import (
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// TestValidator_sameHost (issue 18, item 16): a proxy on the crawler's own
// host (a local gateway) that forwards our address is usable under the
// default policy, and marked so; one on another host that passes our
// address on is still rejected as transparent; and --proxy-anonymity
// elite refuses the local one too.
func TestValidator_sameHost(t *testing.T) {
	start := starter(t)
	local := start(proxytest.NewTransparent())
	elsewhere := start(proxytest.NewTransparentElsewhere())
	for _, tc := range []struct {
		min                 Anonymity
		localState, reasonP string
	}{{Anonymous, string(StateUsable), "same host as the crawler"}, {Elite, string(StateRejected), "elite required"}} {
		rdb, keys := redisT(t)
		o := testOptions(writeSource(t, t.TempDir(), local.Line(), elsewhere.Line()))
		o.MinAnonymity = tc.min
		if _, err := newValidator(t, rdb, keys, o).Round(ctxT(t)); err != nil {
			t.Fatalf("Round: %v", err)
		}
		l, err := newPool(t, rdb, keys, nil).List(ctxT(t), true)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Entry{}
		for _, e := range l.Proxies {
			got[e.Proxy] = e
		}
		if e := got[local.Line()]; string(e.State) != tc.localState || !strings.Contains(e.Reason, tc.reasonP) {
			t.Errorf("min %s: the same-host proxy is %s (%q), want %s (%q)", tc.min, e.State, e.Reason, tc.localState, tc.reasonP)
		}
		if e := got[elsewhere.Line()]; e.State != StateRejected || e.Reason != "transparent proxy, "+string(tc.min)+" required" {
			t.Errorf("min %s: the transparent proxy elsewhere is %s (%q), want rejected as transparent", tc.min, e.State, e.Reason)
		}
	}
}
