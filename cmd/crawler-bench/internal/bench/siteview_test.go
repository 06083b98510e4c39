package bench

import (
	"reflect"
	"testing"
	"time"
)

// ms is a time of the tests' made-up requests, in milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestMaxInWindow(t *testing.T) {
	for _, tc := range []struct {
		name        string
		arrivals    []int // ms, sorted
		most, first int
	}{
		{"none", nil, 0, 0},
		{"one", []int{500}, 1, 0},
		{"evenly at the rate: 5 per second", []int{0, 200, 400, 600, 800, 1000, 1200}, 5, 0},
		{"the window is half-open: one a second apart is not within it", []int{0, 1000}, 1, 0},
		{"just inside", []int{0, 999}, 2, 0},
		{"a burst across a calendar second", []int{100, 900, 950, 1000, 1050, 1100, 1850, 2500}, 6, 1},
		{"same instant", []int{300, 300, 300, 1400}, 3, 0},
		{"the busiest second late", []int{0, 1500, 1600, 1700, 1800, 2400, 2499, 2500}, 6, 1},
		{"a redirect loop's hops bunched", []int{0, 210, 230, 250, 270, 400, 600, 800, 1000, 1200}, 9, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrivals := make([]time.Duration, len(tc.arrivals))
			for i, a := range tc.arrivals {
				arrivals[i] = ms(a)
			}
			most, first := maxInWindow(arrivals, time.Second)
			if most != tc.most || first != tc.first {
				t.Errorf("maxInWindow = %d from #%d, want %d from #%d", most, first, tc.most, tc.first)
			}
		})
	}
}

func TestMaxInFlight(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans [][2]int // arrived, left in ms, in any order
		want  int
	}{
		{"none", nil, 0},
		{"one", [][2]int{{0, 100}}, 1},
		{"one after another", [][2]int{{0, 100}, {100, 200}, {200, 300}}, 1},
		{"overlapping by a millisecond", [][2]int{{0, 101}, {100, 200}}, 2},
		{"nested", [][2]int{{0, 1000}, {100, 200}, {150, 160}, {300, 400}}, 3},
		{"out of order", [][2]int{{300, 400}, {0, 1000}, {150, 160}, {100, 200}}, 3},
		{"a stall holds a slot while others come and go", [][2]int{{0, 1100}, {10, 110}, {20, 120}, {110, 210}, {120, 220}, {210, 310}}, 3},
		{"eight at once, then nine", [][2]int{{0, 100}, {0, 100}, {0, 100}, {0, 100}, {0, 100}, {0, 100}, {0, 100}, {0, 100},
			{200, 300}, {200, 300}, {200, 300}, {200, 300}, {200, 300}, {200, 300}, {200, 300}, {200, 300}, {250, 260}}, 9},
		{"a reset leaves at once", [][2]int{{0, 0}, {0, 100}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := make([]siteRequest, len(tc.spans))
			for i, s := range tc.spans {
				reqs[i] = siteRequest{arrived: ms(s[0]), left: ms(s[1])}
			}
			if got := maxInFlight(reqs); got != tc.want {
				t.Errorf("maxInFlight = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestViewOf: a host's view from requests in any order: its peaks, its
// busiest second with the paths in it, its loop hops.
func TestViewOf(t *testing.T) {
	reqs := []siteRequest{
		{ms(1200), ms(1300), "/detail/3"},
		{ms(0), ms(100), "/robots.txt"},
		{ms(200), ms(300), "/list/1"},
		{ms(400), ms(500), "/loop/1"},
		{ms(410), ms(510), "/loop/2"},
		{ms(420), ms(520), "/loop/3"},
		{ms(430), ms(530), "/detail/1"},
		{ms(2600), ms(2700), "/detail/2"},
	}
	v := viewOf("127.0.0.2", reqs)
	want := HostView{Host: "127.0.0.2", Requests: 8, LoopHops: 3, PeakInFlight: 4, PeakSecond: 6, BusiestAt: 0,
		BusiestPaths: []string{"/robots.txt (+0 ms)", "/list/1 (+200 ms)", "/loop/1 (+400 ms)", "/loop/2 (+410 ms)",
			"/loop/3 (+420 ms)", "/detail/1 (+430 ms)"}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("viewOf =\n%+v, want\n%+v", v, want)
	}
	site := SiteView{Hosts: []HostView{v, {Host: "127.0.0.3", Requests: 9, PeakInFlight: 9, PeakSecond: 5}}}
	if site.Busiest().Host != "127.0.0.3" || site.PeakSecond().Host != "127.0.0.2" || site.PeakInFlight().PeakInFlight != 9 ||
		site.Requests() != 17 || site.LoopHops() != 3 || site.OverInFlight(8) != 1 || site.OverSecond(5) != 1 || site.OverSecond(6) != 0 {
		t.Errorf("site view of %+v: busiest %s, peak second on %s, over 8 in flight %d, over 5 a second %d",
			site.Hosts, site.Busiest().Host, site.PeakSecond().Host, site.OverInFlight(8), site.OverSecond(5))
	}
}
