package bench

import (
	"regexp"
	"strings"

	"github.com/crawler-dev/crawler/internal/luascript"
)

// scriptLabel matches the head of a script's comment block that names
// it: "-- SlaveQueue.Ack: ...", "-- frontier.commit: ...", "-- Bloom mode:
// ...", "-- Registry.Heartbeat. ...", "-- Set mode (...", "-- Leased.Release
// and ...".
var scriptLabel = regexp.MustCompile(`^-- ((?:[A-Za-z_]+\.)?[A-Za-z_]+(?: mode)?)(?:[:.](?:\s|$)| \(| and )`)

// scriptName names a cluster script from its source: the label that heads
// its first named comment block after the shared prelude, followed by the
// next one when the first names a mode ("Bloom mode Admit", a dedup script
// composed of a mode and a step), or "" when it has none.
func scriptName(src string) string {
	src = strings.TrimPrefix(src, luascript.Prelude())
	var labels []string
	inComment := false
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		isComment := strings.HasPrefix(line, "--")
		if isComment && !inComment {
			if m := scriptLabel.FindStringSubmatch(line); m != nil {
				labels = append(labels, m[1])
				if !strings.HasSuffix(m[1], " mode") {
					break
				}
			}
		}
		inComment = isComment
	}
	return strings.Join(labels, " ")
}
