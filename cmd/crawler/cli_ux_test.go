package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
)

// TestCLI_help: every command has examples, and --version answers.
func TestCLI_help(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Example == "" && c.Name() != "help" && c.Name() != "completion" && c.Parent() != nil &&
			c.Parent().Name() != "completion" {
			t.Errorf("crawler %s has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	out, _, err := crawler(t, time.Minute, "--version")
	if err != nil || !strings.HasPrefix(out, "crawler ") || !strings.Contains(out, "go1.") {
		t.Errorf("crawler --version = %q, %v; want the version and the Go release", out, err)
	}
}

// TestRun_outputs: -o picks the format by its extension and - is stdout;
// an unknown extension is refused naming -o; progress on a pipe is plain
// lines, never a carriage return.
func TestRun_outputs(t *testing.T) {
	_, base := serveSite(t, demosite.Options{Details: 40, GoneEvery: -1, FlakyEvery: -1})
	job := writeJob(t, "outputs", base)
	dir := t.TempDir()

	csvPath := filepath.Join(dir, "items.csv")
	_, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", csvPath)
	if err != nil {
		t.Fatalf("run -o items.csv: %v\n%s", err, tail(stderr, 2000))
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 41 || rows[0][0] != "url" {
		t.Errorf("items.csv: %d rows (%v), header %v; want a header and 40 rows", len(rows), err, rows[:min(len(rows), 1)])
	}
	if strings.Contains(stderr, "\r") {
		t.Error("progress on a pipe contains a carriage return")
	}

	stdout, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", "-", "--quiet", "--log-level", "warn")
	if err != nil {
		t.Fatalf("run -o -: %v\n%s", err, tail(stderr, 2000))
	}
	if n := strings.Count(stdout, `"url":`); n != 40 {
		t.Errorf("run -o - wrote %d items to stdout, want 40", n)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`run -o - created a file named "-"`)
	}
	if strings.Contains(stderr, "discovered") {
		t.Errorf("--quiet showed progress: %s", tail(stderr, 500))
	}

	_, stderr, err = crawler(t, time.Minute, "run", "--job", job, "-o", filepath.Join(dir, "items.xml"))
	if err == nil || !strings.Contains(stderr, "-o") {
		t.Errorf("run -o items.xml: %v, %q; want an error naming -o", err, stderr)
	}
}

// TestRun_nothingFetched: a job in which nothing could be fetched exits
// non-zero with the reason.
func TestRun_nothingFetched(t *testing.T) {
	job := writeJob(t, "nothing", "http://127.0.0.1:1")
	out := filepath.Join(t.TempDir(), "items.jsonl")
	// info-level logs, so that a failure shows how far the master got
	_, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", out, "--log-level", "info")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("run with an unreachable seed: %v, want a non-zero exit", err)
	}
	if !strings.Contains(stderr, "nothing could be fetched") || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("stderr does not say nothing could be fetched and why:\n%s", tail(stderr, 4000))
	}
}

// TestRun_interrupt: Ctrl-C during a crawl drains and says so, not
// "context canceled"; the items stored so far are in the file.
func TestRun_interrupt(t *testing.T) {
	_, base := serveSite(t, demosite.Options{Details: 400, Delay: 100 * time.Millisecond})
	out := filepath.Join(t.TempDir(), "items.jsonl")
	p := start(t, "run", "run", "--job", writeJob(t, "interrupted", base), "-o", out, "--concurrency", "2", "--slaves", "1")
	eventually(t, time.Minute, "some items stored", func() bool {
		b, _ := os.ReadFile(out)
		return bytes.Count(b, []byte("\n")) >= 5
	})
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("run did not exit within a minute of Ctrl-C")
	}
	output := p.out.String()
	if p.cmd.ProcessState.ExitCode() == 0 {
		t.Error("an interrupted run exited 0")
	}
	if !strings.Contains(output, "interrupted") || strings.Contains(output, "context canceled") {
		t.Errorf("the interrupted run did not say so plainly:\n%s", tail(output, 1500))
	}
	if n := len(readItems(t, out)); n < 5 {
		t.Errorf("%d items in the file after the interruption", n)
	}
}

// TestClient_jobs: list, watch on a pipe, cancel (queued tasks dropped and
// counted), the warning when a job ran within its window, and reset.
func TestClient_jobs(t *testing.T) {
	env := newClusterEnv(t)
	// slow enough (8 at a time, 100 ms each: over 10 s) that tasks are
	// still queued when the cancel comes
	slow := faultSite
	slow.Delay = 100 * time.Millisecond
	site, base := serveSite(t, slow)
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	jobFile := writeJob(t, "cancelme", base)
	env.submit(t, "cancelme", jobFile)
	env.waitProgress(t, "cancelme", "100 pages stored", func(c client.Counters) bool { return c.Stored >= 100 })

	out, _, err := crawler(t, time.Minute, append([]string{"client", "jobs"}, env.flags()...)...)
	if err != nil || !strings.Contains(out, "cancelme") || !strings.Contains(out, "running") {
		t.Errorf("client jobs = %q, %v; want cancelme running", out, err)
	}
	watched, _, err := crawler(t, time.Minute, append([]string{"client", "status", "--job", "cancelme", "--watch", "--timeout", "2s"}, env.flags()...)...)
	if !strings.Contains(watched, "discovered") || strings.Contains(watched, "\033[") {
		t.Errorf("status --watch on a pipe: %q (%v); want plain progress lines", tail(watched, 300), err)
	}
	if out, errOut, err := crawler(t, time.Minute, append([]string{"client", "cancel", "--job", "cancelme"}, env.flags()...)...); err != nil {
		t.Fatalf("client cancel: %v %s %s", err, out, errOut)
	}
	st := env.wait(t, "cancelme", time.Minute)
	c := st.Counters
	if st.CancelledAt == "" || c.Cancelled == 0 || c.Discovered != c.Settled() {
		t.Errorf("after cancel: cancelled_at %q, cancelled %d, discovered %d vs settled %d", st.CancelledAt, c.Cancelled, c.Discovered, c.Settled())
	}
	if int(c.Stored) >= len(site.Expected()) {
		t.Errorf("stored %d of %d: the cancel did not stop the crawl", c.Stored, len(site.Expected()))
	}

	_, warn, err := crawler(t, time.Minute, append([]string{"client", "submit", "--job", jobFile}, env.flags()...)...)
	if err != nil || !strings.Contains(warn, "warning: job cancelme finished") {
		t.Errorf("resubmitting within the window: %v, stderr %q; want a warning", err, warn)
	}
	_ = env.wait(t, "cancelme", 3*time.Minute)
	if out, errOut, err := crawler(t, time.Minute, append([]string{"client", "reset", "--job", "cancelme", "--yes"}, env.flags()...)...); err != nil || !strings.Contains(out, "reset") {
		t.Fatalf("client reset: %v %s %s", err, out, errOut)
	}
	if _, err := client.GetStatus(context.Background(), env.rdb, env.keys, "cancelme", 64); !errors.Is(err, client.ErrJobNotFound) {
		t.Errorf("after reset the job is still there: %v", err)
	}
	if n := len(env.rdb.Keys(context.Background(), env.keys.Job("cancelme").Tag()+"*").Val()); n != 0 {
		t.Errorf("%d keys of the job left after reset", n)
	}
}
