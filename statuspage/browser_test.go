package statuspage

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// browser starts a headless Chromium of its own and returns a tab's
// context; the browser stops when the test ends.
func browser(t *testing.T) context.Context { return browsertest.New(t) }

// console collects the tab's console errors and exceptions until the
// test ends.
func console(t *testing.T, tab context.Context) func() []string {
	return browsertest.ConsoleErrors(t, tab)
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	return browsertest.Eval[T](t, tab, expr)
}

// waitFor polls a JavaScript condition in the tab.
func waitFor(t *testing.T, tab context.Context, what, cond string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("the page showing %s (%s)", what, cond),
		func() bool { return eval[bool](t, tab, cond) })
}

// js quotes s as a JavaScript string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBrowser_FollowsCrawl loads the page in a real browser, then advances
// a job's counters in Redis the way a master and its slaves do, and checks
// that the page follows without a reload. It keeps a screenshot.
func TestBrowser_FollowsCrawl(t *testing.T) {
	tab := browser(t)
	errs := console(t, tab)
	f := newFixture(t)
	busyCluster(f)
	const hostile = `<img src=x onerror="document.title='pwned'">`
	f.submit("hostile") // the name must pass the API; a host need not
	f.register(7, hostile, 4)
	srv := f.serve(f.source(nil), func(o *Options) { o.Refresh, o.CacheFor = 250*time.Millisecond, 0 })

	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL()), chromedp.WaitVisible(`tr[data-job="news"]`)); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, tab, `window.sameLoad = true`)
	row := `document.querySelector('tr[data-job="news"]')`
	if got := eval[string](t, tab, row+`.querySelector('.pct').textContent`); got != "50.0%" {
		t.Errorf("news shows %s done, want 50.0%%", got)
	}
	waitFor(t, tab, "that it is live", `document.getElementById('live').classList.contains('ok')`)

	// The crawl goes on: slave 0 stores 3 pages a step and fails one every
	// third, its queue drains; routed 80 + duplicates 0.
	done, stored, failed := int64(40), int64(28), int64(2)
	for i := 1; i <= 12; i++ {
		s := step{slave: 0, stored: 3}
		if i%3 == 0 {
			s.failed = 1
		}
		f.crawl("news", s)
		f.rdb.LPop(f.ctx, f.keys.Job("news").Queue(0))
		done, stored, failed = done+s.stored+s.failed, stored+s.stored, failed+s.failed
		waitFor(t, tab, fmt.Sprintf("%d pages done", done), fmt.Sprintf(`%s.querySelector('.done').textContent === %s`,
			row, js(formatInt(done))))
	}
	// 40 + 36 + 4 = 80 of 80.
	if got := eval[string](t, tab, row+`.querySelector('.pct').textContent`); done != 80 || got != "100.0%" {
		t.Errorf("after the crawl: %d done, page shows %s, want 100.0%%", done, got)
	}
	if got := eval[string](t, tab, `document.getElementById('t-stored').textContent`); got != formatInt(stored) {
		t.Errorf("stored card %s, want %d: the running job's, not the finished one's too", got, stored)
	}
	if !eval[bool](t, tab, `window.sameLoad === true`) {
		t.Error("the page reloaded; it must update in place")
	}
	checkCharts(t, tab)
	checkHostile(t, tab, hostile)
	screenshot(t, tab, "statuspage.png")
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// checkCharts checks that the charts drew the crawl: a pages/s line with
// several points and a positive rate, and one line per slave queue.
func checkCharts(t *testing.T, tab context.Context) {
	t.Helper()
	waitFor(t, tab, "a pages/s line", `document.querySelector('#chart-rate polyline')?.getAttribute('points').split(' ').length > 3`)
	if rate := eval[string](t, tab, `document.getElementById('c-rate').textContent`); rate == "–" || rate == "" {
		t.Errorf("pages/s caption %q", rate)
	}
	if n := eval[int](t, tab, `document.querySelectorAll('#chart-queue polyline').length`); n < 3 {
		t.Errorf("%d queue lines, want one per slave with a queue (0, 1, 5, 7)", n)
	}
}

// checkHostile checks that text from the cluster stays text in the
// browser too, after the script redrew the tables.
func checkHostile(t *testing.T, tab context.Context, host string) {
	t.Helper()
	if n := eval[int](t, tab, `document.querySelectorAll('main img').length`); n != 0 {
		t.Errorf("%d img elements made from cluster text", n)
	}
	if !eval[bool](t, tab, `[...document.querySelectorAll('#slaves td')].some((td) => td.textContent === `+js(host)+`)`) {
		t.Errorf("the hostile host is not shown as text")
	}
	if title := eval[string](t, tab, `document.title`); title == "pwned" {
		t.Error("a slave's host ran as script")
	}
}

// TestBrowser_WithoutJavaScript loads the page with scripts off: the job
// and its progress are there, rendered by the server.
func TestBrowser_WithoutJavaScript(t *testing.T) {
	tab := browser(t)
	f := newFixture(t)
	busyCluster(f)
	srv := f.serve(f.source(nil), nil)
	if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled,
		emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL()), chromedp.WaitVisible(`tr[data-job="news"]`)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(tab, chromedp.Text(`tr[data-job="news"] .ptext`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "50.0% 40 / 80"; text != want {
		t.Errorf("progress %q, want %q", text, want)
	}
	if live, _ := chromedp.Run(tab, chromedp.Text(`#live`)); live != "static page, reloads every 5s" {
		t.Errorf("live marker %q", live)
	}
	screenshot(t, tab, "statuspage-nojs.png")
}

// screenshot writes a full-page PNG to the test artifacts: the directory
// $CRAWLER_TEST_ARTIFACTS, or testdata/artifacts (git-ignored); see
// browsertest.ArtifactsDir.
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	browsertest.Screenshot(t, tab, name)
}
