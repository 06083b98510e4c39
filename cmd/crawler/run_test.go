package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// TestRun crawls a site the way a user runs `crawler run`: embedded Redis,
// items to a JSON Lines file, no servers.
func TestRun(t *testing.T) {
	t.Parallel()
	site, base := serveSite(t, demosite.Options{Details: 200})
	jobFile := writeJob(t, "local", base)
	out := filepath.Join(t.TempDir(), "items.jsonl")

	stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", jobFile, "-o", out, "--log-level", "warn")
	if err != nil {
		t.Fatalf("crawler run: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	items := readItems(t, out)
	want := site.Expected()
	stored := 0
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.URL] {
			t.Errorf("%s written twice", it.URL)
		}
		seen[it.URL] = true
		checkItem(t, base, it)
	}
	for path, o := range want {
		if o == demosite.Stored {
			stored++
			if !seen[base+path] {
				t.Errorf("%s missing from %s", base+path, out)
			}
		}
	}
	if len(items) != stored {
		t.Errorf("%d items, want %d", len(items), stored)
	}
	failures, err := os.ReadFile(store.FailuresPath(out))
	if err != nil {
		t.Fatalf("failures file: %v", err)
	}
	if n := strings.Count(string(failures), "\n"); n != len(want)-stored {
		t.Errorf("%d failures recorded, want %d", n, len(want)-stored)
	}
	for _, wantLine := range []string{"job local: finished", "items: " + out} {
		if !strings.Contains(stdout, wantLine) {
			t.Errorf("summary lacks %q:\n%s", wantLine, stdout)
		}
	}
	if !strings.Contains(stderr, "stored") {
		t.Errorf("no progress line on stderr: %q", tail(stderr, 500))
	}
}

// TestRun_BadInput checks that bad input exits non-zero naming what is wrong.
func TestRun_BadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: Bad Name\nseeds: [\"http://127.0.0.1/\"]\ndetail_link: {css: a}\nfields: {t: {css: h1}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing job flag", []string{"run"}, "--job"},
		{"missing file", []string{"run", "--job", filepath.Join(dir, "nope.yaml")}, "--job"},
		{"invalid name", []string{"run", "--job", bad}, "name"},
		{"bad slaves", []string{"run", "--job", writeJob(t, "ok", "http://127.0.0.1:1"), "--slaves", "0"}, "--slaves"},
		{"slave without id", []string{"slave"}, "--id"},
		{"bad log level", []string{"--log-level", "loud", "version"}, "--log-level"},
		{"status without job", []string{"client", "status"}, "--job"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := crawler(t, time.Minute, tc.args...)
			if err == nil {
				t.Fatalf("exit 0, want an error naming %s", tc.want)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not name %s", stderr, tc.want)
			}
		})
	}
}

// TestDemo runs `crawler demo` as the README's first command does.
func TestDemo(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo.jsonl")
	// info-level logs, so that a failure shows how far the master got
	stdout, stderr, err := crawler(t, 3*time.Minute, "demo", "--details", "120", "-o", out, "--log-level", "info")
	if err != nil {
		t.Fatalf("crawler demo: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	for _, want := range []string{"demo site at http://127.0.0.1:", "job demo: finished",
		"expected: 119 pages stored, 1 gone (404) recorded as failed; got 119 stored, 1 failed", "every link accounted for", ": true"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	if n := len(readItems(t, out)); n != 119 {
		t.Errorf("%d items in %s, want 119", n, out)
	}
}

// TestRun_nothingStored (issue 18, item 2): a job whose detail_link matches
// nothing fetches its list pages and stores nothing: run exits non-zero
// saying why, and client status --wait on the finished job says it stored
// nothing and exits non-zero too.
func TestRun_nothingStored(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 20})
	job := strings.Replace(demosite.JobYAML("empty", base), `{css: ".item a"`, `{css: ".no-such-class a"`, 1)
	if !strings.Contains(job, "no-such-class") {
		t.Fatalf("the demo job's detail_link changed:\n%s", job)
	}
	jobFile := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(jobFile, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	_, keys := testenv.Redis(t)
	conn := []string{"--redis", testenv.RedisURL(), "--prefix", keys.Prefix}
	out := filepath.Join(t.TempDir(), "items.jsonl")
	stdout, stderr, err := crawler(t, 3*time.Minute, append([]string{"run", "--job", jobFile, "-o", out, "--log-level", "warn"}, conn...)...)
	if err == nil {
		t.Fatalf("crawler run of a job that stores nothing exited 0\nstdout %s\nstderr %s", stdout, tail(stderr, 2000))
	}
	if !strings.Contains(stderr, "detail_link") {
		t.Errorf("run's error does not say that detail_link matched nothing:\n%s", tail(stderr, 2000))
	}
	stdout, stderr, err = crawler(t, time.Minute, append([]string{"client", "status", "--job", "empty", "--wait"}, conn...)...)
	if err == nil || !strings.Contains(stderr, "stored nothing") {
		t.Errorf("client status --wait on a job that stored nothing: %v\nstdout %s\nstderr %s; want a non-zero exit saying it stored nothing", err, stdout, stderr)
	}
}

// TestRun_sharedOutput (issue 18, item 14): runs that share an -o file
// each list their own failures: the second run of a job whose page failed
// in the first too lists it (a page's first failure record stays the
// file's only one), and a run lists no failure of another job's run.
func TestRun_sharedOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "items.jsonl")
	run := func(job, base string) string {
		t.Helper()
		_, stderr, err := crawler(t, 2*time.Minute, "run", "--job", writeJob(t, job, base), "-o", out, "--quiet")
		if err == nil {
			t.Fatalf("run of an unreachable seed exited 0")
		}
		return stderr
	}
	run("first", "http://127.0.0.1:1")
	// The first run was an hour ago: age its records.
	failed := store.FailuresPath(out)
	b, err := os.ReadFile(failed)
	if err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	aged := regexp.MustCompile(`"failed_at":"[^"]*"`).ReplaceAll(b, []byte(`"failed_at":"`+hourAgo+`"`))
	if err := os.WriteFile(failed, aged, 0o644); err != nil {
		t.Fatal(err)
	}
	second := run("first", "http://127.0.0.1:1")
	if !strings.Contains(second, "list page: ") || !strings.Contains(second, "×1") {
		t.Errorf("the second run does not list its own failure:\n%s", tail(second, 2000))
	}
	other := run("other", "http://127.0.0.1:2")
	if strings.Contains(other, "127.0.0.1:1") || !strings.Contains(other, "127.0.0.1:2") {
		t.Errorf("another job's run lists the failures of the first:\n%s", tail(other, 2000))
	}
}

// TestClient_suggestionsCarryFlags (issue 18, item 4): a submission to a
// Redis and prefix where no master ever ran says so, and the commands a
// refusal suggests carry the --prefix given, so pasting them acts on the
// same cluster.
func TestClient_suggestionsCarryFlags(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 5})
	_, keys := testenv.Redis(t)
	conn := []string{"--redis", testenv.RedisURL(), "--prefix", keys.Prefix}
	jobFile := writeJob(t, "carried", base)

	stdout, stderr, err := crawler(t, time.Minute, append([]string{"client", "submit", "--job", jobFile}, conn...)...)
	if err != nil || !strings.Contains(stderr, "no master") || !strings.Contains(stderr, keys.Prefix) {
		t.Errorf("submit where no master ever ran: %v\nstdout %s\nstderr %s; want a warning naming the prefix", err, stdout, stderr)
	}
	if _, _, err := crawler(t, time.Minute, append([]string{"client", "cancel", "--job", "carried"}, conn...)...); err != nil {
		t.Fatalf("client cancel: %v", err)
	}
	out := filepath.Join(t.TempDir(), "items.jsonl")
	if _, stderr, err := crawler(t, 2*time.Minute, append([]string{"run", "--job", jobFile, "-o", out, "--quiet"}, conn...)...); err != nil {
		t.Fatalf("run: %v\n%s", err, tail(stderr, 2000))
	}
	_, stderr, err = crawler(t, time.Minute, append([]string{"client", "submit", "--job", jobFile}, conn...)...)
	if want := suggested(testenv.RedisURL(), keys.Prefix, "client reset", "--job", "carried", "--yes"); err == nil || !strings.Contains(stderr, want) {
		t.Errorf("submitting again within the window: %v, stderr %q; want the suggestion %q", err, stderr, want)
	}
}

// TestDemo_quietSaysWhereFailuresGo (issue 18, item 5): with the items on
// stdout and --quiet, the failures still go to a file, and stderr says
// which.
func TestDemo_quietSaysWhereFailuresGo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "demo", "--details", "120", "-o", "-", "--quiet")
	cmd.Env, cmd.Dir = cleanEnv(), dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo -o - --quiet: %v\n%s", err, tail(stderr.String(), 2000))
	}
	if _, err := os.Stat(filepath.Join(dir, "failed.jsonl")); err != nil {
		t.Fatalf("the demo's gone page was not recorded in failed.jsonl: %v", err)
	}
	if !strings.Contains(stderr.String(), "failures: failed.jsonl") {
		t.Errorf("stderr does not say where the failures went:\n%s", tail(stderr.String(), 2000))
	}
}

// TestClient_resultsFromFiles (issue 18, a cluster without MongoDB):
// client results --from merges items files written by crawls (as each
// slave of a cluster given --output writes its own), each item once,
// into any of run's formats; failures files are left out.
func TestClient_resultsFromFiles(t *testing.T) {
	t.Parallel()
	site, base := serveSite(t, demosite.Options{Details: 30})
	dir := t.TempDir()
	job := writeJob(t, "merged", base)
	for _, name := range []string{"items-0.jsonl", "items-1.jsonl"} {
		if _, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", filepath.Join(dir, name), "--quiet"); err != nil {
			t.Fatalf("run -o %s: %v\n%s", name, err, tail(stderr, 2000))
		}
	}
	stored := 0
	for _, o := range site.Expected() {
		if o == demosite.Stored {
			stored++
		}
	}
	out := filepath.Join(dir, "merged.csv")
	if _, stderr, err := crawler(t, time.Minute, "client", "results", "--job", "merged",
		"--from", filepath.Join(dir, "items-*.jsonl"), "-o", out); err != nil {
		t.Fatalf("client results --from: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "url,") || len(lines)-1 != stored {
		t.Errorf("merged CSV: header %q and %d rows, want url first and %d rows (each item once)", lines[0], len(lines)-1, stored)
	}
	if _, stderr, err := crawler(t, time.Minute, "client", "results", "--job", "nope", "--from", filepath.Join(dir, "items-*.jsonl")); err == nil ||
		!strings.Contains(stderr, "no items of job") {
		t.Errorf("results of an unknown job from files: %v %s; want an error", err, stderr)
	}
}

// TestClient_statusRequireEmptyPool (issue 18, item 16): a job that
// requires proxies while the pool holds none usable says why in client
// status instead of waiting silently.
func TestClient_statusRequireEmptyPool(t *testing.T) {
	t.Parallel()
	_, keys := testenv.Redis(t)
	conn := []string{"--redis", testenv.RedisURL(), "--prefix", keys.Prefix}
	job := filepath.Join(t.TempDir(), "proxied.yaml")
	if err := os.WriteFile(job, []byte(demosite.JobYAML("proxied", "http://127.0.0.1:1")+"proxy: require\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := crawler(t, time.Minute, append([]string{"client", "submit", "--job", job}, conn...)...); err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	for _, format := range [][]string{nil, {"--json"}} {
		stdout, stderr, err := crawler(t, time.Minute, append(append([]string{"client", "status", "--job", "proxied"}, conn...), format...)...)
		if err != nil || !strings.Contains(stdout, "no usable proxy") {
			t.Errorf("client status %v of a proxy: require job with an empty pool: %v\n%s%s; want it to say the pool has no usable proxy", format, err, stdout, stderr)
		}
	}
}
