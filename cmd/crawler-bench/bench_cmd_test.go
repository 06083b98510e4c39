package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestBenchCommands_flagErrors runs the bench subcommands with a bad flag
// each: the error names the flag, and nothing is started.
func TestBenchCommands_flagErrors(t *testing.T) {
	defer func(old string) { crawlerFlag = old }(crawlerFlag)
	crawlerFlag = "sh" // any executable: nothing is started
	for _, tc := range []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{newBenchCrawlCmd, []string{"--hosts", "300"}, "--hosts: 300 is outside 1..254"},
		{newBenchCrawlCmd, []string{"--seeds", "some"}, "--seeds: some is not all or first"},
		{newBenchCrawlCmd, []string{"--format", "html"}, "--format: html is not text or md"},
		{newBenchIdleCmd, []string{"--duration", "10ms"}, "--duration: 10ms is outside 1s..1h"},
		{newBenchMemoryCmd, []string{"--pages", "0"}, "--pages: 0 must be at least 1"},
		{newBenchMemoryCmd, []string{"--latency", "2m"}, "--latency: 2m0s is outside 0..1m"},
		{newBenchDedupCmd, []string{"--format", "x"}, "--format: x is not text or md"},
		{newBenchAssignCmd, []string{"--format", "x"}, "--format: x is not text or md"},
		{newBenchReportCmd, []string{"--redis-server", "/nonexistent/redis-server", "--quick"}, "redis server:"},
		{newBenchSiteCmd, []string{"--crawlers", "cluster,scrapy"}, "--crawlers: scrapy is not cluster, run, colly, run-postgres, run-kafka, run-s3, run-warc"},
		{newBenchSiteCmd, []string{"--rounds", "0"}, "--rounds: 0 is outside 1..100"},
		{newBenchKindsCmd, []string{"--pages", "0"}, "--pages: 0 is outside 1..1000000"},
		{newBenchKindsCmd, []string{"--per-page", "0"}, "--per-page: 0 is outside 1..10000"},
		{newBenchHostsCmd, []string{"--hosts", "40,20000"}, "--hosts: 20000 is outside 1..10000"},
		{newBenchHostsCmd, []string{"--list-pages", "200"}, "--list-pages: 200 is outside 1..DetailsPerHost (130)"},
		{newBenchHostsCmd, []string{"--busy-loops", "-1"}, "--busy-loops: -1 is outside 0..64"},
		{newBenchHostsCmd, []string{"--format", "x"}, "--format: x is not text or md"},
	} {
		cmd := tc.cmd()
		var out bytes.Buffer
		cmd.SetArgs(tc.args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want an error containing %q", cmd.Name(), tc.args, err, tc.want)
		}
	}
}
