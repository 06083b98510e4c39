package politeness

import (
	"testing"
	"time"
)

// TestGate_slowerRuleDropsBookings: times booked at one rate are dropped
// when a slower rule comes (a Crawl-delay learned from robots.txt after
// the robots.txt request booked at the default rate), and kept when the
// rule is as fast or faster.
func TestGate_slowerRuleDropsBookings(t *testing.T) {
	o := DefaultOptions()
	now := time.Now()
	g := newGate("example.com", 0, now)
	fast := Rule{RPS: 5, Burst: 1, Concurrency: 8}
	g.setRule(fast, o)
	g.booked.add(now, now.Add(200*time.Millisecond), now.Add(400*time.Millisecond))
	g.setRule(Rule{RPS: 10, Burst: 1, Concurrency: 8}, o)
	if n := g.booked.len(); n != 3 {
		t.Fatalf("a faster rule left %d of 3 bookings, want all", n)
	}
	g.setRule(Rule{RPS: 10, Burst: 1, Concurrency: 8, CrawlDelay: time.Second}, o)
	if n := g.booked.len(); n != 0 {
		t.Errorf("a Crawl-delay of 1s left %d bookings made at 10/s, want none", n)
	}
}
