package master

import (
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// listPageCase is one list page a runner fetches from a loopback site and
// what it must leave behind.
type listPageCase struct {
	name  string
	pages map[string]string  // the site, by path (serveSite)
	edit  func(*jobspec.Job) // the job, changed from submitSpec's
	stats map[string]string  // job stats that must hold these values ("" for absent)
	// record is what the failure record of the list page must contain,
	// each; none when nil: no record.
	record []string
	// feed is the failure kind the status page's feed must count once;
	// "" for none.
	feed  string
	check func(t *testing.T, f *fixture)
}

// TestJobRunner_listPage: a list page fetched by the master is committed
// with what it leads to (next list pages on the frontier one level
// deeper, new detail links on their slaves' queues, offsite and robots
// counted) or, when it cannot be fetched or read, recorded as failed with
// its reason and kind, counted by why, and taken off the frontier.
func TestJobRunner_listPage(t *testing.T) {
	next := func(s *jobspec.Job) { s.NextLink = &jobspec.LinkRule{CSS: "a.next"} }
	links := `<div class="item"><a href="/p/1">1</a></div><div class="item"><a href="/p/2">2</a></div>
		<div class="item"><a href="http://example.org/x">away</a></div><a class="next" href="/list?page=2">next</a>`
	for _, tc := range []listPageCase{{
		name:  "links routed, next page queued",
		pages: map[string]string{"/list": links},
		edit:  next,
		stats: map[string]string{cluster.StatListPages: "1", cluster.StatRouted: "2", cluster.StatOffsite: "1",
			cluster.StatListFailed: ""},
		check: func(t *testing.T, f *fixture) {
			base := f.seed
			if got := f.frontierPages(t); len(got) != 1 || got[0].URL != base+"/list?page=2" || got[0].Depth != 1 {
				t.Errorf("frontier = %+v, want the next page at depth 1", got)
			}
			var urls []string
			for _, tasks := range f.queuedTasks(t) {
				for _, task := range tasks {
					urls = append(urls, task.URL)
					if task.Referer != base+"/list" || task.Round != 1 || task.Job != "news" {
						t.Errorf("task %+v: want referer the list page, round 1, job news", task)
					}
				}
			}
			if len(urls) != 2 || !strings.Contains(strings.Join(urls, " "), base+"/p/2") {
				t.Errorf("queued %v, want /p/1 and /p/2", urls)
			}
		},
	}, {
		name:  "detail links robots.txt disallows",
		pages: map[string]string{"/list": links, "/robots.txt": "User-agent: *\nDisallow: /p/2\n"},
		stats: map[string]string{cluster.StatListPages: "1", cluster.StatRouted: "1", cluster.StatRobots: "1"},
	}, {
		name:   "not found",
		pages:  map[string]string{},
		stats:  map[string]string{cluster.StatListFailed: "1", cluster.StatListPages: "", cluster.StatRouted: ""},
		record: []string{`"kind":"list"`, `"status":404`, `"page_kind":"start"`},
		feed:   "http_404",
	}, {
		name:   "disallowed by robots.txt",
		pages:  map[string]string{"/list": links, "/robots.txt": "User-agent: *\nDisallow: /list\n"},
		stats:  map[string]string{cluster.StatListFailed: "1", cluster.StatRobots: "1", cluster.StatRouted: ""},
		record: []string{`"kind":"list"`, `robots: `},
	}, {
		// issue 9, defect 5: counted as a detail page redirected off-site
		// is, not as list_failed; list pages are not discovered, so it
		// adds nothing to skipped and the counters still add up.
		name:   "redirected off the allowed domains",
		pages:  map[string]string{"/list": "redirect:$OTHERHOST/elsewhere"},
		stats:  map[string]string{cluster.StatSkippedOffsite: "1", cluster.StatListFailed: "", cluster.StatSkipped: ""},
		record: []string{`"kind":"list"`, "offsite"},
		check: func(t *testing.T, f *fixture) {
			if c := status(t, f).Counters; c.Discovered != c.Settled() {
				t.Errorf("counters %+v: want discovered = settled", c)
			}
		},
	}, {
		// issue 18: a detail_link that costs more than the page's work
		// budget (a text pseudo-class over 400 nested <div> around a big
		// text) fails the page with kind extract_limit.
		name: "extraction past its work budget",
		pages: map[string]string{"/list": strings.Repeat("<div>", 400) + strings.Repeat("lorem ipsum ", 100_000) +
			`<a class="d" href="/p/1">1</a>` + strings.Repeat("</div>", 400)},
		edit: func(s *jobspec.Job) {
			next(s)
			s.DetailLink = &jobspec.LinkRule{CSS: `div:contains("nothing like this") a.d`}
		},
		stats:  map[string]string{cluster.StatListFailed: "1", cluster.StatRouted: ""},
		record: []string{`"kind":"` + extract.FailureLimit + `"`},
		feed:   extract.FailureLimit,
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

func (tc listPageCase) run(t *testing.T) {
	f := newFixture(t)
	srv := serveSite(t, tc.pages)
	f.seed = srv.URL
	f.submitSpec(t, tc.edit, srv.URL+"/list")
	r := f.runner(t, 0, 1)
	f.startRound(t, r)
	f.runDownloader(t)
	f.processEntries(t, r, 1, nil)
	if n := f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val(); n != 0 {
		t.Errorf("%d list pages left in progress, want the page committed", n)
	}
	stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
	for field, want := range tc.stats {
		if stats[field] != want {
			t.Errorf("stats[%s] = %q, want %q (stats %v)", field, stats[field], want, stats)
		}
	}
	records := f.failureRecords(t)
	switch {
	case tc.record == nil && len(records) > 0:
		t.Errorf("failure records %q, want none", records)
	case tc.record != nil && len(records) != 1:
		t.Errorf("failure records %q, want one", records)
	case tc.record != nil:
		for _, want := range tc.record {
			if !strings.Contains(records[0], want) {
				t.Errorf("failure record %s lacks %s", records[0], want)
			}
		}
	}
	fs, err := feed.ReadFailures(f.ctx, f.rdb, f.keys, []string{"news"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fs["news"].ByKind; (tc.feed == "" && len(got) > 0) || (tc.feed != "" && got[tc.feed] != 1) {
		t.Errorf("feed counts %v, want one %q", got, tc.feed)
	}
	if tc.check != nil {
		tc.check(t, f)
	}
}
