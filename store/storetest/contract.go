package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/crawler-dev/crawler/store"
)

// checkItems checks that the job holds exactly the pages want (page
// number -> the titles any of its saves carried), each once.
func checkItems(t *testing.T, b Backend, job string, want map[int][]string) {
	t.Helper()
	got := b.Items(t, job)
	byURL := map[string][]store.Item{}
	for _, it := range got {
		byURL[it.URL] = append(byURL[it.URL], it)
	}
	for n, titles := range want {
		w := Item(job, n, "")
		its := byURL[w.URL]
		if len(its) != 1 {
			t.Errorf("job %s page %d: %d records, want 1", job, n, len(its))
			continue
		}
		it := its[0]
		if it.Job != job || it.Status != 200 || !contains(titles, fmt.Sprint(it.Fields["title"])) {
			t.Errorf("job %s page %d = job %q status %d title %q; want job %s, status 200, title one of %q",
				job, n, it.Job, it.Status, it.Fields["title"], job, titles)
		}
		delete(byURL, w.URL)
	}
	for url, its := range byURL {
		t.Errorf("job %s holds %d records of %s, which was not saved", job, len(its), url)
	}
}

// checkFailures checks that the job holds exactly the failures want (page
// number -> the reasons any of its saves carried), each once.
func checkFailures(t *testing.T, b Backend, job string, want map[int][]string) {
	t.Helper()
	byURL := map[string][]store.Failure{}
	for _, f := range b.Failures(t, job) {
		byURL[f.URL] = append(byURL[f.URL], f)
	}
	for n, reasons := range want {
		w := Failure(job, n, "")
		fs := byURL[w.URL]
		if len(fs) != 1 {
			t.Errorf("job %s page %d: %d failure records, want 1", job, n, len(fs))
			continue
		}
		f := fs[0]
		if f.ID != w.ID || f.Kind != store.KindDetail || f.Status != 503 || !contains(reasons, f.Reason) {
			t.Errorf("job %s page %d failure = %+v; want ID %s, kind detail, status 503, reason one of %q", job, n, f, w.ID, reasons)
		}
		delete(byURL, w.URL)
	}
	for url := range byURL {
		t.Errorf("job %s holds a failure of %s, which was not saved (or was deleted)", job, url)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func save(t *testing.T, s Store, its ...store.Item) {
	t.Helper()
	for _, it := range its {
		if err := s.SaveItem(ctxOf(t), it); err != nil {
			t.Fatalf("SaveItem(%s): %v", it.ID, err)
		}
	}
}

func saveFailure(t *testing.T, s Store, fs ...store.Failure) {
	t.Helper()
	for _, f := range fs {
		if err := s.SaveFailure(ctxOf(t), f); err != nil {
			t.Fatalf("SaveFailure(%s): %v", f.ID, err)
		}
	}
}

// testVisible: what a save returned nil for, a reader sees now, before
// the store is closed (a slave acknowledges its task right after).
func testVisible(t *testing.T, b Backend) {
	s := open(t, b)
	save(t, s, Item("news", 1, "one"))
	checkItems(t, b, "news", map[int][]string{1: {"one"}})
	saveFailure(t, s, Failure("news", 2, "gone"))
	checkFailures(t, b, "news", map[int][]string{2: {"gone"}})
}

// testItemIdempotent: a redelivered task saves its item again; the page
// keeps one record, the first or the last.
func testItemIdempotent(t *testing.T, b Backend) {
	s := open(t, b)
	save(t, s, Item("news", 1, "first"), Item("news", 2, "two"), Item("news", 1, "again"))
	checkItems(t, b, "news", map[int][]string{1: {"first", "again"}, 2: {"two"}})
}

func testFailureIdempotent(t *testing.T, b Backend) {
	s := open(t, b)
	saveFailure(t, s, Failure("news", 1, "http status 503"), Failure("news", 1, "timeout"))
	checkFailures(t, b, "news", map[int][]string{1: {"http status 503", "timeout"}})
}

// testDeleteFailure: a page that failed and is stored on retry: the slave
// saves the item, then drops the failure record.
func testDeleteFailure(t *testing.T, b Backend) {
	s := open(t, b)
	saveFailure(t, s, Failure("news", 1, "timeout"), Failure("news", 2, "timeout"))
	save(t, s, Item("news", 1, "stored on retry"))
	if err := s.DeleteFailure(ctxOf(t), Failure("news", 1, "").ID); err != nil {
		t.Fatalf("DeleteFailure: %v", err)
	}
	if err := s.DeleteFailure(ctxOf(t), store.ItemID("news", "never-failed")); err != nil {
		t.Errorf("DeleteFailure of a page with no record: %v, want nil", err)
	}
	checkItems(t, b, "news", map[int][]string{1: {"stored on retry"}})
	want := map[int][]string{2: {"timeout"}}
	if b.AppendOnly {
		want[1] = []string{"timeout"}
	}
	checkFailures(t, b, "news", want)
}

// testJobsApart: the same page in two jobs is two records.
func testJobsApart(t *testing.T, b Backend) {
	s := open(t, b)
	save(t, s, Item("news", 1, "news one"), Item("blog", 1, "blog one"))
	checkItems(t, b, "news", map[int][]string{1: {"news one"}})
	checkItems(t, b, "blog", map[int][]string{1: {"blog one"}})
}

// testConcurrent: 32 savers, as a slave's fetchers; every page is saved
// twice at about the same time (a redelivery racing the first delivery).
func testConcurrent(t *testing.T, b Backend) {
	const savers, pages, failures = 32, 48, 16
	s := open(t, b)
	var wg sync.WaitGroup
	errs := make(chan error, 2*(pages+failures))
	for w := 0; w < savers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w % (savers / 2); n < pages; n += savers / 2 {
				errs <- s.SaveItem(ctxOf(t), Item("news", n, fmt.Sprintf("by %d", w)))
			}
			for n := w % (savers / 2); n < failures; n += savers / 2 {
				errs <- s.SaveFailure(ctxOf(t), Failure("news", 1000+n, fmt.Sprintf("by %d", w)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("save: %v", err)
		}
	}
	all := make([]string, savers)
	for w := range all {
		all[w] = fmt.Sprintf("by %d", w)
	}
	wantItems, wantFailures := map[int][]string{}, map[int][]string{}
	for n := 0; n < pages; n++ {
		wantItems[n] = all
	}
	for n := 0; n < failures; n++ {
		wantFailures[1000+n] = all
	}
	checkItems(t, b, "news", wantItems)
	checkFailures(t, b, "news", wantFailures)
}

// testReopen: a restarted process opens the same storage; what was there
// stays, a redelivery makes no second record, new pages are added.
func testReopen(t *testing.T, b Backend) {
	s := b.Open(t)
	save(t, s, Item("news", 1, "one"), Item("news", 2, "two"))
	saveFailure(t, s, Failure("news", 3, "gone"))
	mustClose(t, s)

	s = open(t, b)
	save(t, s, Item("news", 2, "two again"), Item("news", 4, "four"))
	saveFailure(t, s, Failure("news", 3, "gone again"), Failure("news", 5, "gone"))
	checkItems(t, b, "news", map[int][]string{1: {"one"}, 2: {"two", "two again"}, 4: {"four"}})
	checkFailures(t, b, "news", map[int][]string{3: {"gone", "gone again"}, 5: {"gone"}})
	mustClose(t, s)
	checkItems(t, b, "news", map[int][]string{1: {"one"}, 2: {"two", "two again"}, 4: {"four"}})
}

// testClosed: a save after Close must fail, or a slave would acknowledge
// a task whose item went nowhere.
func testClosed(t *testing.T, b Backend) {
	s := b.Open(t)
	save(t, s, Item("news", 1, "one"))
	mustClose(t, s)
	if err := s.SaveItem(ctxOf(t), Item("news", 2, "late")); err == nil {
		t.Error("SaveItem after Close = nil, want an error")
	}
	if err := s.SaveItem(ctxOf(t), Item("news", 1, "one")); err == nil {
		t.Error("SaveItem of a stored page after Close = nil, want an error")
	}
	if err := s.SaveFailure(ctxOf(t), Failure("news", 3, "late")); err == nil {
		t.Error("SaveFailure after Close = nil, want an error")
	}
	checkItems(t, b, "news", map[int][]string{1: {"one"}})
}

// checkRounds checks page n of the job after saves in rounds (in order):
// a store that replaces holds one record, of the last round; an
// append-only one holds one record per round, in order. Either way the
// page's current record (the last) is of the last round, with a title
// among titles.
func checkRounds(t *testing.T, b Backend, job string, n int, rounds []int64, titles []string) {
	t.Helper()
	url := Item(job, n, "").URL
	var got []int64
	var current store.Item
	for _, it := range b.Items(t, job) {
		if it.URL == url {
			got, current = append(got, it.Round), it
		}
	}
	want := rounds[len(rounds)-1:]
	if b.AppendOnly {
		want = rounds
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("job %s page %d: records of rounds %v, want %v", job, n, got, want)
		return
	}
	if title := fmt.Sprint(current.Fields["title"]); !contains(titles, title) {
		t.Errorf("job %s page %d: current record's title %q, want one of %q (the latest round's)", job, n, title, titles)
	}
}

// testRecrawl: after recrawl_every and the dupefilter's window, a page is
// fetched and saved again in a later round; its new content must be kept,
// while a redelivery within either round still makes no second record.
func testRecrawl(t *testing.T, b Backend) {
	s := open(t, b)
	save(t, s, ItemOfRound("news", 1, 1, "first"), ItemOfRound("news", 2, 1, "two"), ItemOfRound("news", 1, 1, "first again"))
	save(t, s, ItemOfRound("news", 1, 2, "recrawled"), ItemOfRound("news", 1, 2, "recrawled again"))
	checkRounds(t, b, "news", 1, []int64{1, 2}, []string{"recrawled", "recrawled again"})
	checkRounds(t, b, "news", 2, []int64{1}, []string{"two"})
}

// testRecrawlReopen: the same across restarts of the process: a file
// reopened knows which round each of its records is of.
func testRecrawlReopen(t *testing.T, b Backend) {
	s := b.Open(t)
	save(t, s, ItemOfRound("news", 1, 1, "first"))
	mustClose(t, s)
	s = b.Open(t)
	save(t, s, ItemOfRound("news", 1, 1, "first again"), ItemOfRound("news", 1, 2, "recrawled"))
	mustClose(t, s)
	s = open(t, b)
	save(t, s, ItemOfRound("news", 1, 2, "recrawled again"))
	checkRounds(t, b, "news", 1, []int64{1, 2}, []string{"recrawled", "recrawled again"})
}
