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
