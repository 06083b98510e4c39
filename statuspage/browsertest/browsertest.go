// Package browsertest runs headless Chromium for the status page's browser
// tests (those of statuspage, which drive the page from a fixture, and
// those of cmd/crawler, which watch a real crawl) and keeps their
// screenshots where a person or CI can find them: ArtifactsDir.
//
// Only tests import it; Chromium is the Debian package "chromium" (or
// CRAWLER_TEST_CHROMIUM names the binary).
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPackage is the Debian package the browser tests need.
const ChromiumPackage = "chromium"

// ArtifactsEnv names the directory screenshots go to instead of
// ArtifactsDir's default.
const ArtifactsEnv = "CRAWLER_TEST_ARTIFACTS"

// ChromiumPath finds Chromium, or fails the test: CI installs it, so a
// missing browser is a broken machine, not a reason to skip.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CRAWLER_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no Chromium found: install it with `apt-get install -y %s` (or set CRAWLER_TEST_CHROMIUM)", ChromiumPackage)
	return ""
}

// New starts a headless Chromium of its own (fresh profile, no background
// traffic: this network is closed, 1280×900) and returns a tab's context.
// The browser stops when the test ends; its output is logged if the test
// failed.
func New(t testing.TB) context.Context {
	t.Helper()
	var out syncBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath(t)),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(&out),
	)
	// A guard against a hung browser, not a timed assertion.
	guard, stopGuard := context.WithTimeout(context.Background(), 5*time.Minute)
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

// ConsoleErrors collects the tab's console errors and exceptions (a script
// error, a request the page's security policy refused) until the test
// ends; the function returned reads them so far.
func ConsoleErrors(t testing.TB, tab context.Context) func() []string {
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

// Eval evaluates a JavaScript expression in the tab, failing the test on
// an error.
func Eval[T any](t testing.TB, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// ArtifactsDir is where screenshots are kept: $CRAWLER_TEST_ARTIFACTS
// when set, else statuspage/testdata/artifacts in this repository
// (git-ignored), whichever package's test writes them.
func ArtifactsDir() string {
	if dir := os.Getenv(ArtifactsEnv); dir != "" {
		return dir
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) { // built with -trimpath: relative to statuspage's tests
		return filepath.Join("testdata", "artifacts")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "artifacts")
}

// Screenshot writes a full-page PNG of the tab to ArtifactsDir()/name,
// logs where, and returns the path.
func Screenshot(t testing.TB, tab context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := ArtifactsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
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
