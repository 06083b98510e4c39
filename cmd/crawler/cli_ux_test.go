package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// TestCLI_help: every command has examples, the parents (crawler, crawler
// client) included, and --version answers with the commit
// or says it is unknown (the test binary is built with plain go build,
// under GOFLAGS=-buildvcs=false on CI).
func TestCLI_help(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		builtin := c.Name() == "help" || c.Name() == "completion" || (c.Parent() != nil && c.Parent().Name() == "completion")
		if !builtin && c.Example == "" {
			t.Errorf("%s has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	for _, parent := range [][]string{{"--help"}, {"client", "--help"}} {
		if out, _, err := crawler(t, time.Minute, parent...); err != nil || !strings.Contains(out, "Examples:") {
			t.Errorf("crawler %s: %v, no examples:\n%s", strings.Join(parent, " "), err, out)
		}
	}
	out, _, err := crawler(t, time.Minute, "--version")
	if err != nil || !strings.HasPrefix(out, "crawler ") || !strings.Contains(out, "go1.") || !strings.Contains(out, "commit ") {
		t.Errorf("crawler --version = %q, %v; want the version, the commit (or that it is unknown) and the Go release", out, err)
	}
}

// TestRun_outputs: -o picks the format by its extension and - is stdout,
// which then holds the items and nothing else (the summary goes to
// stderr, and --quiet logs only warnings); an unknown extension is
// refused naming -o; with --log-format json every line of stderr is JSON,
// progress included, and never a carriage return.
func TestRun_outputs(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 40, GoneEvery: -1, FlakyEvery: -1})
	job := writeJob(t, "outputs", base)
	dir := t.TempDir()

	csvPath := filepath.Join(dir, "items.csv")
	_, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", csvPath, "--log-format", "json")
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
	checkJSONLogs(t, stderr)

	stdout, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", "-", "--quiet")
	if err != nil {
		t.Fatalf("run -o -: %v\n%s", err, tail(stderr, 2000))
	}
	if n := jsonLines(t, stdout, `"url":`); n != 40 {
		t.Errorf("run -o - wrote %d items to stdout, want 40", n)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`run -o - created a file named "-"`)
	}
	if !strings.Contains(stderr, "job outputs: finished") {
		t.Errorf("run -o -: no summary on stderr:\n%s", tail(stderr, 2000))
	}
	if strings.Contains(stderr, " | ") || strings.Contains(stderr, "INFO") {
		t.Errorf("--quiet showed progress or info logs:\n%s", tail(stderr, 2000))
	}

	_, stderr, err = crawler(t, time.Minute, "run", "--job", job, "-o", filepath.Join(dir, "items.xml"))
	if err == nil || !strings.Contains(stderr, "-o") {
		t.Errorf("run -o items.xml: %v, %q; want an error naming -o", err, stderr)
	}
}

// jsonLines checks that every line of out is a JSON object and counts
// those holding want.
func jsonLines(t *testing.T, out, want string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !json.Valid([]byte(line)) || !strings.HasPrefix(line, "{") {
			t.Errorf("stdout holds a line that is no item: %q", line)
		}
		if strings.Contains(line, want) {
			n++
		}
	}
	return n
}

// checkJSONLogs checks that every line of a --log-format json stream is
// a JSON record, and that the progress is among them.
func checkJSONLogs(t *testing.T, stderr string) {
	t.Helper()
	progress := 0
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		var rec struct {
			Msg    string `json:"msg"`
			Stored *int64 `json:"stored"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("--log-format json wrote a line that is not JSON: %q", line)
			continue
		}
		if rec.Msg == "progress" && rec.Stored != nil {
			progress++
		}
	}
	if progress == 0 {
		t.Errorf("no progress record in the JSON logs:\n%s", tail(stderr, 2000))
	}
}

// TestDemo_validatesFirst: a bad flag is refused before the demo site
// starts and says where it is.
func TestDemo_validatesFirst(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := crawler(t, time.Minute, "demo", "-o", filepath.Join(t.TempDir(), "x.xml"))
	if err == nil || !strings.Contains(stderr, "-o") {
		t.Errorf("demo -o x.xml: %v, stderr %q; want an error naming -o", err, stderr)
	}
	if strings.Contains(stdout+stderr, "demo site at") {
		t.Errorf("demo -o x.xml started the site before refusing:\n%s%s", stdout, stderr)
	}
}

// TestDemo_itemsOnStdout: `crawler demo -o - | jq`: stdout holds the
// items only; where the site is, the summary and the check are on
// stderr.
func TestDemo_itemsOnStdout(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := crawler(t, 3*time.Minute, "demo", "--details", "30", "-o", "-")
	if err != nil {
		t.Fatalf("demo -o -: %v\n%s", err, tail(stderr, 3000))
	}
	if n := jsonLines(t, stdout, `"url":`); n < 29 {
		t.Errorf("demo -o - wrote %d items to stdout, want 29", n)
	}
	for _, want := range []string{"demo site at", "job demo: finished", "every link accounted for"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, tail(stderr, 2000))
		}
	}
}

// TestRun_nothingFetched: a job in which nothing could be fetched exits
// non-zero with the reasons, listed as "reason ×count"; the summary says
// no request was answered instead of "requests 0 ()".
func TestRun_nothingFetched(t *testing.T) {
	t.Parallel()
	job := writeJob(t, "nothing", "http://127.0.0.1:1")
	out := filepath.Join(t.TempDir(), "items.jsonl")
	// info-level logs, so that a failure shows how far the master got
	stdout, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", out, "--log-level", "info")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("run with an unreachable seed: %v, want a non-zero exit", err)
	}
	if !strings.Contains(stderr, "nothing could be fetched") || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("stderr does not say nothing could be fetched and why:\n%s", tail(stderr, 4000))
	}
	if !strings.Contains(stderr, "\n  list page: ") || !strings.Contains(stderr, " ×1") {
		t.Errorf("the reasons are not a list of \"reason ×count\":\n%s", tail(stderr, 1000))
	}
	if strings.Contains(stdout, "()") || !strings.Contains(stdout, "requests none answered") {
		t.Errorf("the summary's requests line:\n%s", stdout)
	}
}

// TestRun_nothingFetchedMongo: with --mongo the reasons are read from the
// failed collection, and the error says how to see them all there.
func TestRun_nothingFetchedMongo(t *testing.T) {
	t.Parallel()
	uri, _ := testMongo(t)
	_, stderr, err := crawler(t, 2*time.Minute, "run", "--job", writeJob(t, "nothingmongo", "http://127.0.0.1:1"),
		"--mongo", uri, "--quiet")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("run with an unreachable seed: %v, want a non-zero exit", err)
	}
	for _, want := range []string{"nothing could be fetched", "list page: ", " ×1", "db.failed.find({job: \"nothingmongo\"})"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, tail(stderr, 2000))
		}
	}
	if strings.Contains(stderr, "client results") {
		t.Errorf("the error points to client results, which exports no failures:\n%s", tail(stderr, 2000))
	}
}

// TestRun_everyDetailFails: list pages that work but detail pages that
// all fail is a failed run too: non-zero, with the reasons.
func TestRun_everyDetailFails(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 20, GoneEvery: 1, FlakyEvery: -1})
	out := filepath.Join(t.TempDir(), "items.jsonl")
	_, stderr, err := crawler(t, 2*time.Minute, "run", "--job", writeJob(t, "allgone", base), "-o", out, "--quiet")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("run whose every detail page is gone: %v, want a non-zero exit\n%s", err, tail(stderr, 2000))
	}
	for _, want := range []string{"no detail page could be stored (20 failed", "detail page: ", "×20", store.FailuresPath(out)} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, tail(stderr, 2000))
		}
	}
}

// TestRun_interrupt: Ctrl-C during a crawl drains and says so, not
// "context canceled"; the items stored so far are in the file.
func TestRun_interrupt(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 400, Delay: 100 * time.Millisecond})
	out := filepath.Join(t.TempDir(), "items.jsonl")
	p := start(t, "run", "run", "--job", writeJob(t, "interrupted", base), "-o", out, "--concurrency", "2", "--slaves", "1")
	interruptAfterItems(t, p, out)
	output := p.out.String()
	if p.cmd.ProcessState.ExitCode() == 0 {
		t.Error("an interrupted run exited 0")
	}
	if !strings.Contains(output, "interrupted") || strings.Contains(output, "context canceled") {
		t.Errorf("the interrupted run did not say so plainly:\n%s", tail(output, 1500))
	}
	items := readItems(t, out)
	if len(items) < 5 {
		t.Errorf("%d items in the file after the interruption", len(items))
	}
	// The summary is read after the drain: what it counts stored is in the
	// file, and nothing is left in flight.
	m := regexp.MustCompile(`= stored (\d+) .* in flight (\d+)`).FindStringSubmatch(output)
	if m == nil {
		t.Fatalf("no summary in the output:\n%s", tail(output, 1500))
	}
	if m[1] != strconv.Itoa(len(items)) || m[2] != "0" {
		t.Errorf("summary says stored %s, in flight %s; the file holds %d items: want them equal and none in flight\n%s",
			m[1], m[2], len(items), tail(output, 1500))
	}
}

// TestClient_jobs: list, watch on a pipe, cancel (queued tasks dropped and
// counted), the warning when a job ran within its window, and reset.
func TestClient_jobs(t *testing.T) {
	t.Parallel()
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

	// Submitted again within its window: refused, saying what to do, and
	// the job is left finished, so the advice can be followed.
	submit := append([]string{"client", "submit", "--job", jobFile}, env.flags()...)
	_, refusal, err := crawler(t, time.Minute, submit...)
	if err == nil || !strings.Contains(refusal, "job cancelme finished") ||
		!strings.Contains(refusal, suggested(env.redis, env.prefix, "client reset", "--job", "cancelme", "--yes")) || !strings.Contains(refusal, "--force") {
		t.Errorf("resubmitting within the window: %v, stderr %q; want a refusal naming reset and --force", err, refusal)
	}
	if st, err := jobStatus(context.Background(), env.rdb, env.keys, "cancelme"); err != nil || st.State != "finished" {
		t.Errorf("after the refused submit the job is %v (%v), want it left finished", st, err)
	}
	out, warn, err := crawler(t, time.Minute, append(submit, "--force")...)
	if err != nil || strings.TrimSpace(out) != "cancelme" || !strings.Contains(warn, "warning: job cancelme finished") {
		t.Errorf("submit --force within the window: %v, stdout %q, stderr %q; want it submitted with a warning", err, out, warn)
	}
	_ = env.wait(t, "cancelme", 3*time.Minute)
	if out, errOut, err := crawler(t, time.Minute, append([]string{"client", "reset", "--job", "cancelme", "--yes"}, env.flags()...)...); err != nil || !strings.Contains(out, "reset") {
		t.Fatalf("client reset: %v %s %s", err, out, errOut)
	}
	if _, err := jobStatus(context.Background(), env.rdb, env.keys, "cancelme"); !errors.Is(err, client.ErrJobNotFound) {
		t.Errorf("after reset the job is still there: %v", err)
	}
	if n := len(env.rdb.Keys(context.Background(), env.keys.Job("cancelme").Tag()+"*").Val()); n != 0 {
		t.Errorf("%d keys of the job left after reset", n)
	}
	env.submit(t, "cancelme", jobFile) // reset, then submit: what the refusal said to do
}

// TestRun_resume (issue 18, item 9): a run on a real Redis, interrupted,
// is resumed by the same command, as its message says: the rerun is not
// refused as "already pending or running", and ends with every page.
func TestRun_resume(t *testing.T) {
	t.Parallel()
	site, base := serveSite(t, demosite.Options{Details: 150, Delay: 50 * time.Millisecond})
	_, keys := testenv.Redis(t)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	args := []string{"--job", writeJob(t, "resumed", base), "-o", out, "--concurrency", "2", "--slaves", "1",
		"--redis", testenv.RedisURL(), "--prefix", keys.Prefix}
	p := start(t, "run", append([]string{"run"}, args...)...)
	interruptAfterItems(t, p, out)
	if !strings.Contains(p.out.String(), "run again with the same --redis and --prefix "+keys.Prefix+" to resume job resumed") {
		t.Fatalf("the interrupted run does not say how to resume:\n%s", tail(p.out.String(), 1500))
	}
	stdout, stderr, err := crawler(t, 3*time.Minute, append([]string{"run", "--quiet"}, args...)...)
	if err != nil {
		t.Fatalf("the resumed run: %v\nstdout %s\nstderr %s", err, tail(stdout, 1500), tail(stderr, 1500))
	}
	stored := 0
	for _, o := range site.Expected() {
		if o == demosite.Stored {
			stored++
		}
	}
	seen := map[string]bool{}
	for _, it := range readItems(t, out) {
		seen[it.URL] = true
	}
	if len(seen) != stored {
		t.Errorf("after the resume the file holds %d pages, want %d", len(seen), stored)
	}
}

// interruptAfterItems presses Ctrl-C on the run p once out holds five
// items, and waits for it to exit.
func interruptAfterItems(t *testing.T, p *proc, out string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, "some items stored", func() bool {
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
}
