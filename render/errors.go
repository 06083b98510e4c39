package render

import "errors"

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
