package metrics

import "time"

// Results of an extraction, for Extracted.
const (
	ExtractOK    = "ok"
	ExtractLimit = "limit" // past the page's work budget
	ExtractError = "error"
)

// Extracted records how long one page's extraction took and how it ended
// (ExtractOK, ExtractLimit or ExtractError).
func (n *Node) Extracted(d time.Duration, result string) {
	if n == nil {
		return
	}
	n.extract.WithLabelValues(result).Observe(d.Seconds())
}

// Results of a rendering, for Rendered.
const (
	RenderOK      = "ok"
	RenderTimeout = "timeout" // past its render_timeout
	RenderBrowser = "browser" // the browser died or could not start
	RenderError   = "error"
)

// Rendered records how long one page's rendering in the headless browser
// took and how it ended (RenderOK, RenderTimeout, RenderBrowser or
// RenderError). The histogram's count is the pages rendered.
func (n *Node) Rendered(d time.Duration, result string) {
	if n == nil {
		return
	}
	n.render.WithLabelValues(result).Observe(d.Seconds())
}

// Reasons the process's headless browser was replaced, for
// BrowserRestarted.
const (
	RestartDied   = "died"   // it crashed or was killed
	RestartHung   = "hung"   // it stopped answering
	RestartMemory = "memory" // it grew past --render-max-memory
)

// BrowserRestarted counts one headless browser the process replaced, for
// the reason given (RestartDied, RestartHung or RestartMemory; any other
// is counted as "other"). The browser is the process's, not a node's, so
// the series has no role or slave label.
func (r *Registry) BrowserRestarted(reason string) {
	if r == nil {
		return
	}
	switch reason {
	case RestartDied, RestartHung, RestartMemory:
	default:
		reason = "other"
	}
	r.f.browserRestarts.WithLabelValues(reason).Inc()
}
