package feed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// TestFeed_loads: a published load reads back, its hosts cut to MaxHosts;
// a slave that published nothing is missing.
func TestFeed_loads(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	l := SlaveLoad{Capacity: 32, MaxParked: 4096, Concurrency: 8, Held: 128, Parked: 100, Fetching: 8, At: time.Now().UTC()}
	for i := range MaxHosts + 3 {
		l.Hosts = append(l.Hosts, HostLoad{Host: fmt.Sprintf("h%d.example", i), Origin: "https://h.example", Held: 20 - i})
	}
	if err := New(rdb, keys).PublishLoad(ctx, 3, l, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLoads(ctx, rdb, keys, []int{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := got[3]
	if !ok || len(got) != 1 || g.Capacity != 32 || g.Held != 128 || g.Parked != 100 || len(g.Hosts) != MaxHosts || g.Hosts[0].Held != 20 {
		t.Fatalf("loads %+v, want slave 3's with %d hosts", got, MaxHosts)
	}
	if w := g.Waiting(); w != 20 {
		t.Errorf("waiting %d, want 128 - 100 parked - 8 fetching = 20", w)
	}
}

// TestFeed_failures: failures are counted by kind and only the last
// Recent kept, newest first.
func TestFeed_failures(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	f := New(rdb, keys)
	for i := range Recent + 4 {
		fl := store.Failure{Job: "j", URL: fmt.Sprintf("https://a.example/%d", i), Kind: store.KindDetail, Reason: fmt.Sprint("r", i)}
		switch i % 3 {
		case 0:
			fl.Status = 404
		case 1:
			fl.Kind = "extract_limit"
		}
		if err := f.Failure(ctx, fl); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadFailures(ctx, rdb, keys, []string{"j", "none"})
	if err != nil {
		t.Fatal(err)
	}
	j := got["j"]
	if j.ByKind["http_404"] != 4 || j.ByKind["extract_limit"] != 4 || j.ByKind["transport"] != 4 {
		t.Errorf("by kind %v, want 4 each of http_404, extract_limit, transport", j.ByKind)
	}
	if len(j.Recent) != Recent || j.Recent[0].URL != fmt.Sprintf("https://a.example/%d", Recent+3) {
		t.Errorf("recent %+v, want the last %d, newest first", j.Recent, Recent)
	}
	if n := got["none"]; len(n.ByKind) != 0 || len(n.Recent) != 0 {
		t.Errorf("a job without failures: %+v", n)
	}
}
