package master

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestRouteFound_batch routes takes of Found entries as slaves send them:
// two pages whose related links overlap, one page sent twice in one take
// (its task delivered twice) and one sent again in a later take. The links
// of each page are admitted once, so every link is routed or counted a
// duplicate exactly once per page that holds it, and each entry taken is
// committed (an entry sent twice in one take is one entry, counted once).
// A link of a list kind goes to the frontier; an undecodable entry is
// dropped.
func TestRouteFound_batch(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler()) // no robots.txt: everything allowed
	defer srv.Close()
	f := newFixture(t)
	spec, err := jobspec.Parse(strings.NewReader(fmt.Sprintf(`name: news
seeds: ["%s/"]
allow_private_networks: true
kinds:
  start:
    links:
      - {css: "a", kind: product}
  product:
    item: true
    fields:
      title: {css: "h1"}
    links:
      - {css: "a.related", kind: product}
      - {css: "a.shelf", kind: shelf}
  shelf:
    links:
      - {css: "a", kind: product}
`, srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.jobs(t).Submit(f.ctx, spec); err != nil {
		t.Fatal(err)
	}
	r := f.runner(t, 0, 1)
	const round = 1
	page := func(n int) string { return srv.URL + "/p/" + strconv.Itoa(n) }
	entry := func(p int, links ...int) string {
		fl := cluster.FoundLinks{Page: page(p), Kind: "product", Round: round, RuleFound: []int{len(links)}, Empty: []string{"title"}}
		for _, l := range links {
			fl.Links = append(fl.Links, cluster.FoundLink{URL: page(l), Kind: "product"})
		}
		return fl.Encode()
	}
	take := func(entries ...string) {
		t.Helper()
		for _, e := range entries {
			if err := f.rdb.RPush(f.ctx, f.jk.Found(), e).Err(); err != nil {
				t.Fatal(err)
			}
		}
		ds, err := r.found.Take(f.ctx, foundBatch, time.Minute)
		if err != nil || len(ds) != len(entries) {
			t.Fatalf("take: %d entries, %v; want %d", len(ds), err, len(entries))
		}
		r.routeFoundBatch(f.ctx, round, ds)
	}
	take(entry(1, 2, 3), entry(2, 3, 4), entry(2, 3, 4))
	take(entry(1, 2, 3), entry(3, 4, 5))
	// A page whose link is of a list kind sends it to the frontier, a
	// level deeper, in a group; an entry that does not decode is dropped
	// (and committed) without holding up the others of its take.
	shelf := cluster.FoundLinks{Page: page(6), Kind: "product", Round: round, RuleFound: []int{0, 1},
		Links: []cluster.FoundLink{{URL: srv.URL + "/shelf/1", Kind: "shelf"}}}
	take(shelf.Encode(), "not a found entry")
	frontier := f.frontierPages(t)
	if len(frontier) != 1 || frontier[0].URL != srv.URL+"/shelf/1" || frontier[0].PageKind() != "shelf" {
		t.Errorf("frontier = %+v, want /shelf/1 of kind shelf", frontier)
	}

	stats, err := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Result()
	if err != nil {
		t.Fatal(err)
	}
	// Pages 1, 2 and 3 admit 2, 3; 3, 4; 4, 5: routed 2, 3, 4, 5, the
	// second 3 and 4 duplicates. Four entries were taken and committed
	// (page 2's two copies in one take are one entry in flight).
	for field, want := range map[string]string{
		cluster.StatRouted: "4", cluster.StatDuplicates: "2",
		cluster.KindPagesStat("product"):           "5",
		cluster.RuleFoundStat("product", 0):        "8",
		cluster.RuleFoundStat("product", 1):        "1",
		cluster.FieldEmptyStat("product", "title"): "4",
	} {
		if stats[field] != want {
			t.Errorf("stats %s = %q, want %s (stats %v)", field, stats[field], want, stats)
		}
	}
	var queued []string
	for _, slave := range []int{0, 1} {
		tasks, err := f.rdb.LRange(f.ctx, f.jk.Queue(slave), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range tasks {
			task, err := cluster.DecodeTask(raw)
			if err != nil {
				t.Fatal(err)
			}
			queued = append(queued, strings.TrimPrefix(task.URL, srv.URL))
		}
	}
	if len(queued) != 4 {
		t.Errorf("tasks queued for %v, want /p/2 to /p/5 once each", queued)
	}
	for _, key := range []string{f.jk.Found(), f.jk.FoundActive()} {
		if n, err := f.rdb.Exists(f.ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("%s left: %d, %v", key, n, err)
		}
	}
}
