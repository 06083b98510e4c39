package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionOf: the commit comes from the build's VCS settings, marked
// when the tree was modified; a plain go build without VCS info says the
// commit is unknown and how to get it, unless make build set the version.
func TestVersionOf(t *testing.T) {
	t.Parallel()
	vcs := func(settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
		for i := 0; i+1 < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	for _, tc := range []struct {
		name, version string
		info          *debug.BuildInfo
		want, not     string
	}{
		{"vcs", "dev", vcs("vcs.revision", "abc123", "vcs.modified", "false"), "dev commit abc123 go", "+modified"},
		{"modified", "dev", vcs("vcs.revision", "abc123", "vcs.modified", "true"), "dev commit abc123+modified go", ""},
		{"no vcs", "dev", vcs(), "dev (commit unknown: built without VCS info; use make build) go", ""},
		{"no build info", "dev", nil, "dev (commit unknown", ""},
		{"make build", "v1.2.0-3-gabc123", vcs(), "v1.2.0-3-gabc123 go", "unknown"},
		{"go install", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v1.3.0 go", "unknown"},
	} {
		got := versionOf(tc.version, tc.info)
		if !strings.HasPrefix(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
			t.Errorf("%s: versionOf = %q, want it to start %q", tc.name, got, tc.want)
		}
	}
}
