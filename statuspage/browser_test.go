package statuspage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// chromiumPackage is the Debian package the browser tests need.
const chromiumPackage = "chromium"

// chromiumPath finds Chromium, or fails the test: CI installs it, so a
// missing browser is a broken machine, not a reason to skip.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CRAWLER_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no Chromium found: install it with `apt-get install -y %s` (or set CRAWLER_TEST_CHROMIUM)", chromiumPackage)
	return ""
}

// browser starts a headless Chromium of its own (fresh profile, no
// background traffic: this network is closed) and returns a tab's context.
// The browser stops when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	var out syncBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(&out),
	)
	// A guard against a hung browser, not a timed assertion.
	guard, stopGuard := context.WithTimeout(context.Background(), 3*time.Minute)
	alloc, stopAlloc := chromedp.NewExecAllocator(guard, opts...)
	tab, stopTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		stopTab()
		stopAlloc()
		stopGuard()
		if t.Failed() {
			t.Logf("chromium output:\n%s", out.String())
		}
	})
	if err := chromedp.Do(tab); err != nil { // starts the browser
		t.Fatalf("start chromium: %v\n%s", err, out.String())
	}
	return tab
}

// console collects the tab's console errors and exceptions (a script
// error, a request the page's security policy refused) until the test
// ends.
func console(t *testing.T, tab context.Context) func() []string {
	ctx, stop := context.WithCancel(tab)
	var (
		mu   sync.Mutex
		msgs []string
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				msgs = append(msgs, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { stop(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), msgs...)
	}
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition in the tab.
func waitFor(t *testing.T, tab context.Context, what, cond string) {
	t.Helper()
	if !eventually(30*time.Second, func() bool { return eval[bool](t, tab, cond) }) {
		t.Fatalf("the page never showed %s (%s)", what, cond)
	}
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
	if got := eval[string](t, tab, `document.getElementById('t-stored').textContent`); got != formatInt(stored+9+0) {
		t.Errorf("stored card %s, want %d", got, stored+9)
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
// $CRAWLER_TEST_ARTIFACTS, or testdata/artifacts (git-ignored).
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("CRAWLER_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, _ := filepath.Abs(filepath.Join(dir, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// syncBuffer is a bytes.Buffer for the browser's output, written from
// another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
