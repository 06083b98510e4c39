package master

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
)

// routeSite is a loopback site whose robots.txt disallows /private.
var routeSite = map[string]string{"/robots.txt": "User-agent: *\nDisallow: /private\n"}

// TestJobRunner_route: the links found on a page go where their kinds
// say: item links through the dupefilter to the slave the table routes
// them to, list links onto the frontier one level deeper within max_depth;
// links off the allowed domains are dropped (item links counted offsite),
// item links robots.txt disallows are counted robots_disallowed.
func TestJobRunner_route(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxDepth int
		allowed  []string       // allowed_domains besides the site's
		links    []extract.Link // URLs on the site given as paths
		frontier []string       // list pages queued, as paths
		queued   []string       // detail tasks queued, as paths
		counters map[string]int64
	}{
		{name: "items to the slaves, lists one level deeper",
			links:    []extract.Link{{URL: "/p/1", Kind: jobspec.KindDetail}, {URL: "/p/2", Kind: jobspec.KindDetail}, {URL: "/list/2", Kind: jobspec.KindStart}},
			frontier: []string{"/list/2"}, queued: []string{"/p/1", "/p/2"}, counters: map[string]int64{}},
		{name: "list pages past max_depth dropped", maxDepth: 1,
			links:  []extract.Link{{URL: "/list/2", Kind: jobspec.KindStart}, {URL: "/p/1", Kind: jobspec.KindDetail}},
			queued: []string{"/p/1"}, counters: map[string]int64{}},
		{name: "off the allowed domains",
			links:    []extract.Link{{URL: "http://example.org/list", Kind: jobspec.KindStart}, {URL: "http://example.org/p", Kind: jobspec.KindDetail}},
			counters: map[string]int64{cluster.StatOffsite: 1}},
		{name: "disallowed by robots.txt",
			links:  []extract.Link{{URL: "/private/1", Kind: jobspec.KindDetail}, {URL: "/p/1", Kind: jobspec.KindDetail}},
			queued: []string{"/p/1"}, counters: map[string]int64{cluster.StatRobots: 1}},
		// issue 29, item 5: robots.txt of an address the guard refuses
		// cannot be asked; the link is routed all the same (its fetch
		// fails it, with the guard's reason), and so are the others.
		{name: "an address the guard refuses", allowed: []string{"169.254.169.254"},
			links: []extract.Link{{URL: "http://169.254.169.254/latest/meta-data/", Kind: jobspec.KindDetail},
				{URL: "/p/1", Kind: jobspec.KindDetail}, {URL: "http://169.254.169.254/list", Kind: jobspec.KindStart}},
			frontier: []string{"http://169.254.169.254/list"},
			queued:   []string{"/p/1", "http://169.254.169.254/latest/meta-data/"}, counters: map[string]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			base := serveSite(t, routeSite).URL
			f.submitSpec(t, func(s *jobspec.Job) {
				s.MaxDepth = tc.maxDepth
				if tc.allowed != nil {
					s.AllowedDomains = append(tc.allowed, "127.0.0.1")
				}
			}, base+"/list")
			r := f.runner(t, 0, 1)
			f.runDownloader(t)
			links := make([]extract.Link, len(tc.links))
			for i, l := range tc.links {
				links[i] = extract.Link{URL: absolute(base, l.URL), Kind: l.Kind}
			}
			counters := map[string]int64{}
			page := cluster.ListPage{URL: base + "/list", Depth: 1}
			if err := r.route(f.ctx, 1, page, pageOnce(page.URL), links, counters); err != nil {
				t.Fatalf("route: %v", err)
			}
			if fmt.Sprint(counters) != fmt.Sprint(tc.counters) {
				t.Errorf("counters = %v, want %v", counters, tc.counters)
			}
			var frontier []string
			for _, p := range f.frontierPages(t) {
				frontier = append(frontier, strings.TrimPrefix(p.URL, base))
				if p.Depth != 2 || p.Kind != "" {
					t.Errorf("frontier page %+v: want depth 2, kind start (empty)", p)
				}
			}
			if fmt.Sprint(frontier) != fmt.Sprint(tc.frontier) {
				t.Errorf("frontier = %v, want %v", frontier, tc.frontier)
			}
			queued := routedPaths(t, f, r, base)
			if fmt.Sprint(queued) != fmt.Sprint(tc.queued) {
				t.Errorf("queued = %v, want %v", queued, tc.queued)
			}
			if got := f.rdb.HGet(f.ctx, f.jk.Stats(), cluster.StatRouted).Val(); got != fmt.Sprint(len(tc.queued)) && len(tc.queued) > 0 {
				t.Errorf("routed = %s, want %d", got, len(tc.queued))
			}
		})
	}
}

// absolute makes a path absolute on base; a URL stays as it is.
func absolute(base, u string) string {
	if strings.HasPrefix(u, "/") {
		return base + u
	}
	return u
}

// routedPaths returns the paths of the tasks queued on the slaves, sorted,
// checking that each is queued on the slave the live table routes it to
// (by host or by fingerprint, as r's job routes).
func routedPaths(t *testing.T, f *fixture, r *jobRunner, base string) []string {
	t.Helper()
	routes := f.m.liveRoutes()
	var out []string
	for slave, tasks := range f.queuedTasks(t) {
		for _, task := range tasks {
			fp := canon.RequestFingerprint("GET", task.URL, nil)
			_, key := r.taskRouteKey(task.Encode())
			if to, err := routes.Route(key); err != nil || to != slave || task.FP != fp.String() {
				t.Errorf("task %s queued on slave %d with fp %s; the table routes it to %d (%v), fp %s",
					task.URL, slave, task.FP, to, err, fp)
			}
			out = append(out, strings.TrimPrefix(task.URL, base))
		}
	}
	sort.Strings(out)
	return out
}

// TestJobRunner_admitOnce: a page's detail links are admitted once per
// round however often the page is fetched (its once-guard), in chunks of
// admitChunk each guarded apart; the same links found on another page are
// duplicates.
func TestJobRunner_admitOnce(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	n := 2*admitChunk + 500
	var cands []dedup.Candidate
	var slaves []int
	for i := 0; i < n; i++ {
		c, slave, err := r.candidate(f.m.liveRoutes(), 1, "https://example.com/list/0",
			extract.Link{URL: fmt.Sprintf("https://example.com/p/%d", i), Kind: jobspec.KindDetail})
		if err != nil {
			t.Fatal(err)
		}
		cands, slaves = append(cands, c), append(slaves, slave)
	}
	counts := func() (routed, dups, queued int64) {
		stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
		fmt.Sscan(stats[cluster.StatRouted], &routed)
		fmt.Sscan(stats[cluster.StatDuplicates], &dups)
		return routed, dups, f.rdb.LLen(f.ctx, f.jk.Queue(0)).Val() + f.rdb.LLen(f.ctx, f.jk.Queue(1)).Val()
	}
	for i := 0; i < 2; i++ { // fetched again after a crash before its commit
		if err := r.admit(f.ctx, 1, "page-a", "", cands, slaves); err != nil {
			t.Fatalf("admit %d: %v", i, err)
		}
		if routed, dups, queued := counts(); routed != int64(n) || dups != 0 || queued != int64(n) {
			t.Fatalf("after admission %d: routed %d, duplicates %d, queued %d; want %d routed and queued once", i, routed, dups, queued, n)
		}
	}
	if err := r.admit(f.ctx, 1, "page-b", "", cands[:10], slaves[:10]); err != nil {
		t.Fatal(err)
	}
	if routed, dups, queued := counts(); routed != int64(n) || dups != 10 || queued != int64(n) {
		t.Errorf("another page's same links: routed %d, duplicates %d, queued %d; want 10 duplicates, nothing new", routed, dups, queued)
	}
	if err := r.admit(f.ctx, 2, "page-a", "", cands[:10], slaves[:10]); err != nil {
		t.Fatal(err)
	}
	if _, dups, _ := counts(); dups != 20 {
		t.Errorf("the page in the next round: duplicates %d, want 20 (its once-guard is the round's)", dups)
	}
}

// TestJobRunner_admitOnceGroup: several pages' links admitted in one call
// under all their once-guards (a take of found links) change nothing when
// any of the pages was admitted before, and say so, so the caller routes
// them a page at a time; pages none of which was admitted are admitted
// together, and then each is guarded.
func TestJobRunner_admitOnceGroup(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	links := func(from, to int) ([]dedup.Candidate, []int) {
		var cands []dedup.Candidate
		var slaves []int
		for i := from; i < to; i++ {
			c, slave, err := r.candidate(f.m.liveRoutes(), 1, "https://example.com/p/0",
				extract.Link{URL: fmt.Sprintf("https://example.com/p/%d", i), Kind: jobspec.KindDetail})
			if err != nil {
				t.Fatal(err)
			}
			cands, slaves = append(cands, c), append(slaves, slave)
		}
		return cands, slaves
	}
	routed := func() string { return f.rdb.HGet(f.ctx, f.jk.Stats(), cluster.StatRouted).Val() }
	admit := func(once []string, from, to int) bool {
		t.Helper()
		cands, slaves := links(from, to)
		applied, err := r.admitOnce(f.ctx, 1, once, cands, slaves)
		if err != nil {
			t.Fatal(err)
		}
		return applied
	}
	if admit([]string{"found:a"}, 0, 5) || routed() != "5" {
		t.Fatalf("page a alone: routed %s, want 5 and not admitted before", routed())
	}
	if !admit([]string{"found:b", "found:a"}, 5, 10) || routed() != "5" {
		t.Fatalf("pages b and a, a admitted before: routed %s, want 5 and told so", routed())
	}
	if admit([]string{"found:b", "found:c"}, 5, 10) || routed() != "10" {
		t.Fatalf("pages b and c: routed %s, want 10", routed())
	}
	if !admit([]string{"found:c"}, 10, 12) || routed() != "10" {
		t.Fatalf("page c again: routed %s, want 10 and told it was admitted", routed())
	}
}

// TestJobRunner_routeEntry: a frontier entry that is not a list page is
// settled without fetching it as one: a seed of an item kind goes to its
// slave; a sitemaps entry is walked (here through the Sitemap: line of the
// seed host's robots.txt) and its pages, each once, routed as the entry's
// kind; a sitemap that cannot be fetched is counted, not retried.
func TestJobRunner_routeEntry(t *testing.T) {
	sitemap := `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
		<url><loc>$BASE/p/1</loc></url><url><loc>$BASE/p/2</loc></url><url><loc>$BASE/p/1</loc></url></urlset>`
	for _, tc := range []struct {
		name   string
		edit   func(s *jobspec.Job, base string)
		stats  map[string]string
		queued []string
	}{
		{name: "seed of an item kind",
			edit: func(s *jobspec.Job, base string) {
				s.Seeds = append(s.Seeds, base+"/p/9")
				s.SeedKinds = map[string]string{base + "/p/9": jobspec.KindDetail}
			},
			stats: map[string]string{cluster.StatRouted: "1", cluster.StatListPages: ""}, queued: []string{"/p/9"}},
		{name: "sitemaps from robots.txt",
			edit: func(s *jobspec.Job, _ string) {
				s.Sitemaps = []jobspec.SitemapRule{{URL: jobspec.SitemapsFromRobots, Kind: jobspec.KindDetail}}
			},
			stats: map[string]string{cluster.StatSitemaps: "1", cluster.StatSitemapURLs: "2", cluster.StatRouted: "2",
				cluster.StatSitemapsFailed: "0"},
			queued: []string{"/p/1", "/p/2"}},
		{name: "a sitemap not found",
			edit: func(s *jobspec.Job, base string) {
				s.Sitemaps = []jobspec.SitemapRule{{URL: base + "/missing.xml", Kind: jobspec.KindDetail}}
			},
			stats: map[string]string{cluster.StatSitemapsFailed: "1", cluster.StatRouted: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			base := serveSite(t, map[string]string{"/robots.txt": "Sitemap: $BASE/sitemap.xml\n", "/sitemap.xml": sitemap}).URL
			f.submitSpec(t, func(s *jobspec.Job) { tc.edit(s, base) }, base+"/list")
			r := f.runner(t, 0, 1)
			f.startRound(t, r)
			f.runDownloader(t)
			entries := int(f.rdb.LLen(f.ctx, f.jk.Frontier()).Val())
			started := f.processEntries(t, r, entries, func(p cluster.ListPage) bool { return p.Sitemap > 0 || p.Kind != "" })
			if len(started) != 1 {
				t.Fatalf("%d entries besides the list seed, want 1", len(started))
			}
			if n := f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val(); n != int64(entries-1) {
				t.Errorf("%d entries in progress, want only the list seed (the entry committed)", n)
			}
			stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
			for field, want := range tc.stats {
				if got := cmp.Or(stats[field], "0"); got != cmp.Or(want, "0") { // a zero is not written
					t.Errorf("stats[%s] = %q, want %q (stats %v)", field, got, want, stats)
				}
			}
			if got := routedPaths(t, f, r, base); fmt.Sprint(got) != fmt.Sprint(tc.queued) {
				t.Errorf("queued %v, want %v", got, tc.queued)
			}
		})
	}
}

// TestJobRunner_routeFound: the links a slave found on an item page are
// routed as a list page's are (items to the slaves, list pages onto the
// frontier), counted by the page's kind, and the entry is committed; an
// entry that cannot be decoded, or names a kind the job does not have,
// is dropped, committed with nothing routed.
func TestJobRunner_routeFound(t *testing.T) {
	f := newFixture(t)
	base := serveSite(t, routeSite).URL
	f.submit(t, base+"/list")
	r := f.runner(t, 0, 1)
	f.runDownloader(t)
	good := cluster.FoundLinks{Page: base + "/p/1", Kind: jobspec.KindDetail, Round: 1, RuleFound: []int{2}, Empty: []string{"title"},
		Links: []cluster.FoundLink{{URL: base + "/p/3", Kind: jobspec.KindDetail}, {URL: base + "/list/5", Kind: jobspec.KindStart}}}
	unknown := cluster.FoundLinks{Page: base + "/p/2", Kind: jobspec.KindDetail, Round: 1,
		Links: []cluster.FoundLink{{URL: base + "/p/4", Kind: "no-such-kind"}}}
	f.rdb.RPush(f.ctx, f.jk.Found(), good.Encode(), "{not found links", unknown.Encode())
	ds, err := r.found.Take(f.ctx, 3, time.Minute)
	if err != nil || len(ds) != 3 {
		t.Fatalf("take: %+v %v", ds, err)
	}
	for _, d := range ds {
		r.settleFound(f.ctx, d, r.routeFound(f.ctx, 1, d))
	}
	if n := f.rdb.LLen(f.ctx, f.jk.Found()).Val() + f.rdb.ZCard(f.ctx, f.jk.FoundActive()).Val(); n != 0 {
		t.Errorf("%d found entries left, want all three committed", n)
	}
	if got := routedPaths(t, f, r, base); fmt.Sprint(got) != "[/p/3]" {
		t.Errorf("queued %v, want only /p/3", got)
	}
	if got := f.frontierPages(t); len(got) != 1 || got[0].URL != base+"/list/5" || got[0].Depth != 1 {
		t.Errorf("frontier %+v, want /list/5 one level below the item page", got)
	}
	stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
	for field, want := range map[string]string{
		cluster.StatRouted:                                  "1",
		cluster.KindPagesStat(jobspec.KindDetail):           "1",
		cluster.RuleFoundStat(jobspec.KindDetail, 0):        "2",
		cluster.FieldEmptyStat(jobspec.KindDetail, "title"): "1",
	} {
		if stats[field] != want {
			t.Errorf("stats[%s] = %q, want %q (stats %v)", field, stats[field], want, stats)
		}
	}
}

// TestJobRunner_routeRetries: the failed tasks client retry-failed put
// back are routed to the live slaves, each to the one the table says.
func TestJobRunner_routeRetries(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	var tasks []any
	for i := 0; i < 20; i++ {
		url := fmt.Sprintf("https://example.com/p/%d", i)
		tasks = append(tasks, cluster.Task{URL: url, FP: canon.RequestFingerprint("GET", url, nil).String(), Job: "news", Retry: true}.Encode())
	}
	f.rdb.RPush(f.ctx, f.jk.Retry(), tasks...)
	r.routeRetries(f.ctx)
	if n := f.rdb.LLen(f.ctx, f.jk.Retry()).Val(); n != 0 {
		t.Errorf("%d tasks left on the retry list", n)
	}
	if got := routedPaths(t, f, r, "https://example.com"); len(got) != len(tasks) {
		t.Errorf("%d tasks queued, want %d", len(got), len(tasks))
	}
}

// TestJobRunner_routeRenderedKinds: a rendered kind's tasks go to the
// render-wait list while no live slave can render, and only to slaves
// that can once one is live, whatever the key; render at the top of a
// short-form job renders its list kind and its item kind.
func TestJobRunner_routeRenderedKinds(t *testing.T) {
	f := newFixture(t)
	render := true
	f.submitSpec(t, func(s *jobspec.Job) { s.Render = &render }, "https://example.com/list")
	r := f.runner(t, 0, 1) // neither slave has a browser
	if got := r.renderedKinds(true); !slices.Equal(got, []string{jobspec.KindDetail}) {
		t.Fatalf("rendered item kinds %q, want [%s]", got, jobspec.KindDetail)
	}
	if got := r.renderedKinds(false); !slices.Equal(got, []string{jobspec.KindStart}) {
		t.Errorf("rendered list kinds %q, want [%s] (render at the top renders every kind)", got, jobspec.KindStart)
	}
	for i := range 20 {
		key := []byte("https://example.com/p/" + strconv.Itoa(i))
		if to, err := r.routeKind(r.m.liveRoutes(), jobspec.KindDetail, key); err != nil || to != queue.RenderWait {
			t.Fatalf("with no renderer, %s routed to %d (%v), want the render-wait list", key, to, err)
		}
	}
	f.m.useTable(assign.Table{Version: 2, Nodes: []assign.Node{{ID: 0, Weight: 32}, {ID: 1, Weight: 32, Render: true}}})
	for i := range 20 {
		key := []byte("https://example.com/p/" + strconv.Itoa(i))
		if to, err := r.routeKind(r.m.liveRoutes(), jobspec.KindDetail, key); err != nil || to != 1 {
			t.Fatalf("with slave 1 the only renderer, %s routed to %d (%v), want 1", key, to, err)
		}
	}
	if moved := movedTo([]queue.Move{{To: 1}, {To: queue.RenderWait}, {To: 1}}); len(moved) != 1 || !moved[1] {
		t.Errorf("movedTo = %v, want only slave 1 (the wait list is nobody to wake)", moved)
	}
}

// TestJobRunner_saysWhoCannotRender: at a round's start a job whose
// rendered item kinds have no renderer says so, naming them, and says
// nothing once one is live; a master without a browser says its rendered
// list kinds will fail.
func TestJobRunner_saysWhoCannotRender(t *testing.T) {
	f := newFixture(t)
	render := true
	f.submitSpec(t, func(s *jobspec.Job) { s.Render = &render }, "https://example.com/list")
	r := f.runner(t, 0)
	core, logs := observer.New(zap.WarnLevel)
	r.log = zap.New(core)
	r.sayRenderers()
	r.checkListRenderer(f.ctx) // this master was given no renderer
	f.m.useTable(assign.Table{Version: 2, Nodes: []assign.Node{{ID: 0, Weight: 32, Render: true}}})
	r.sayRenderers()
	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("%d log entries, want a warning for the item kind and an error for the list kind: %v", len(entries), entries)
	}
	for i, want := range []struct {
		level zapcore.Level
		kind  string
	}{{zap.WarnLevel, jobspec.KindDetail}, {zap.ErrorLevel, jobspec.KindStart}} {
		e := entries[i]
		kinds, _ := e.ContextMap()["kinds"].([]any)
		if e.Level != want.level || len(kinds) != 1 || kinds[0] != want.kind {
			t.Errorf("entry %d: %s %q %v, want a %s naming kind %s", i, e.Level, e.Message, e.ContextMap(), want.level, want.kind)
		}
	}
}
