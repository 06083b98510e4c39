package render

import (
	"errors"
	"fmt"
)

// ErrTimeout means a page did not render within its render_timeout: it
// never finished loading, or its wait_for never matched. Its text is the
// failure reason a crawl records.
var ErrTimeout = errors.New("render_timeout")

// ErrBrowserDied means the browser crashed, was killed or was restarted
// while the page rendered; another try renders it in a new browser.
var ErrBrowserDied = errors.New("render: the browser died while the page rendered")

// ErrNoBrowser means the browser cannot be started: not installed, not at
// the path given, or failing at start. No retry on this process helps.
var ErrNoBrowser = errors.New("render: no usable browser (install chromium or give --browser PATH)")

// ErrNavigation means the page navigated its tab away (a script set
// location, a meta refresh, a form) and that navigation failed: its
// address was refused (the address guard, robots.txt) or its fetch
// failed. The tab then holds the browser's error page, not the page, so
// the rendering fails; the error says which navigation and why.
var ErrNavigation = errors.New("render: the page navigated away and the navigation failed")

// ErrMemory means the page used more memory while it rendered than the
// renderer's cap (Options.MaxMemory, --render-max-memory); the rendering
// was stopped. Its text starts "render memory over".
var ErrMemory = errors.New("render memory over the cap")

// memoryError is an ErrMemory: what the cap was and what passed it.
type memoryError struct {
	limit int64
	what  string
}

func (e *memoryError) Error() string {
	return fmt.Sprintf("render memory over %s: %s", mib(e.limit), e.what)
}

func (e *memoryError) Is(target error) bool { return target == ErrMemory }

// mib shows n bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%dMiB", n>>20) }
