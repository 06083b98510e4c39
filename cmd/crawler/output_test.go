package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/client"
)

// TestPrintStatus_cancelled: the text status of a cancelled job says so
// and shows the cancelled pages, so the identity it prints adds up.
func TestPrintStatus_cancelled(t *testing.T) {
	t.Parallel()
	st := &client.Status{Job: "news", State: "finished", Round: 1, CancelledAt: "2026-01-02T03:04:05Z",
		Counters: client.Counters{ListPages: 3, Discovered: 100, Stored: 40, Failed: 2, Skipped: 1, Duplicates: 7, Cancelled: 50}}
	var b bytes.Buffer
	printStatus(&b, st, false)
	out := b.String()
	for _, want := range []string{"job news: finished (cancelled) (round 1)",
		"details discovered 100 = stored 40 + failed 2 + skipped 1 + duplicates 7 + cancelled 50 + queued 0 + in flight 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	st.CancelledAt, st.Cancelling, st.State = "", true, "running"
	b.Reset()
	printStatus(&b, st, false)
	if !strings.Contains(b.String(), "job news: running (cancelling)") {
		t.Errorf("a job being cancelled is not marked:\n%s", b.String())
	}
	b.Reset()
	if err := printJobs(&b, []*client.Status{st}); err != nil || !strings.Contains(b.String(), "CANCELLED") ||
		!strings.Contains(b.String(), "(cancelling)") {
		t.Errorf("client jobs lacks the cancelled column or mark (%v):\n%s", err, b.String())
	}
}

// TestListenAddr: a listener flag given a bare port binds loopback only;
// every interface must be asked for.
func TestListenAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		":9090":          "127.0.0.1:9090",
		"9090":           "127.0.0.1:9090",
		":0":             "127.0.0.1:0",
		"127.0.0.1:9090": "127.0.0.1:9090",
		"0.0.0.0:9090":   "0.0.0.0:9090",
		"[::]:9090":      "[::]:9090",
		"10.0.0.1:9090":  "10.0.0.1:9090",
		"localhost:80":   "localhost:80",
		"not an address": "not an address", // the server's own error names it
	} {
		if got := listenAddr(in); got != want {
			t.Errorf("listenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunLogLevel: --quiet logs warnings and errors only, unless
// --log-level was given.
func TestRunLogLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "info"},
		{[]string{"run", "--quiet"}, "warn"},
		{[]string{"run", "--quiet", "--log-level", "info"}, "info"},
		{[]string{"run", "--quiet", "--log-level", "debug"}, "debug"},
		{[]string{"demo", "-q"}, "warn"},
	} {
		cmd, err := parseCrawlerArgs(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		level, _ := cmd.Flags().GetString("log-level")
		quiet, _ := cmd.Flags().GetBool("quiet")
		if got := runLogLevel(cmd, level, quiet); got != tc.want {
			t.Errorf("%v: level %s, want %s", tc.args, got, tc.want)
		}
	}
}
