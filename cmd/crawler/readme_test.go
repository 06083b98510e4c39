package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// readmeRepoEnv names the repository the README tests clone instead of
// this one (../..). They test what a new user gets, the committed state,
// so uncommitted changes are not in the clone: to try them, commit them in
// a copy and point CRAWLER_TEST_README_REPO at it.
const readmeRepoEnv = "CRAWLER_TEST_README_REPO"

// freshClone clones the repository's committed state into a directory of
// the test's own and returns the README's path in it.
func freshClone(t *testing.T) (dir, readme string) {
	t.Helper()
	root := os.Getenv(readmeRepoEnv)
	if root == "" {
		var err error
		if root, err = filepath.Abs("../.."); err != nil {
			t.Fatal(err)
		}
	}
	dir = filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.Command("git", "clone", "-q", root, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return dir, filepath.Join(dir, "README.md")
}

// TestReadme_TwoCommands runs the README's two commands as written, on a
// fresh clone of the repository: the demo must crawl its site and account
// for every link; make test is checked with make -n (running the whole
// suite inside itself would never end).
func TestReadme_TwoCommands(t *testing.T) {
	t.Parallel()
	clone, readme := freshClone(t)
	cmds := readmeBlocks(t, readme, "## Two commands")[0]
	if len(cmds) != 2 {
		t.Fatalf("README's two commands: found %q", cmds)
	}
	for _, line := range cmds {
		args := strings.Fields(line)
		if args[0] == "make" {
			args = append([]string{"make", "-n"}, args[1:]...)
		}
		out, err := shell(t, clone, 5*time.Minute, strings.Join(args, " "))
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, tail(out, 3000))
		}
		if args[0] == "go" && !strings.Contains(out, "every link accounted for") {
			t.Errorf("%s did not account for every link:\n%s", line, tail(out, 2000))
		}
		if args[0] == "go" && !strings.Contains(out, ": true") {
			t.Errorf("%s: the counters do not add up:\n%s", line, tail(out, 2000))
		}
	}
}

// TestReadme_QuickStart runs the quick start as written, on a fresh clone
// and without a network: the build, the demo crawls and their files, then
// the two-terminal run of a job file (the first terminal's site in the
// background, on a free port instead of 8080, which may be taken here).
func TestReadme_QuickStart(t *testing.T) {
	t.Parallel()
	clone, readme := freshClone(t)
	blocks := readmeBlocks(t, readme, "## Quick start on one machine")
	if len(blocks) < 2 || len(blocks[0]) < 2 || len(blocks[1]) != 2 {
		t.Fatalf("README's quick start: found %q; want the build and demo block, then the two terminals", blocks)
	}
	for _, line := range blocks[0] {
		if out, err := shell(t, clone, 5*time.Minute, line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, tail(out, 3000))
		}
	}
	checkJSONLines(t, filepath.Join(clone, "items.jsonl"))
	checkCSV(t, filepath.Join(clone, "items.csv"))

	serve, crawl := blocks[1][0], blocks[1][1]
	if !strings.Contains(serve, "--serve-only") || !strings.Contains(serve, "127.0.0.1:8080") {
		t.Fatalf("the first terminal's command %q does not serve the demo site on 127.0.0.1:8080", serve)
	}
	serve = strings.Replace(serve, "127.0.0.1:8080", "127.0.0.1:"+freePort(t), 1)
	jobFile := filepath.Join(clone, "demo.yaml")
	background(t, clone, serve)
	testenv.Eventually(t, time.Minute, "the demo site's job file", func() bool {
		b, _ := os.ReadFile(jobFile)
		return strings.Contains(string(b), "detail_link:")
	})
	if out, err := shell(t, clone, 5*time.Minute, crawl); err != nil {
		t.Fatalf("%s: %v\n%s", crawl, err, tail(out, 3000))
	}
	checkJSONLines(t, filepath.Join(clone, "demo.jsonl"))
}

// TestReadme_ClusterFlags: every crawler command line the README shows
// for a cluster (its three hosts, proxies) parses as the binary parses
// it: each flag exists on that command and takes the value shown, "..."
// standing for the flags shown before.
func TestReadme_ClusterFlags(t *testing.T) {
	t.Parallel()
	n := 0
	for _, block := range readmeBlocks(t, "../../README.md", "## A cluster on three hosts") {
		for _, line := range block {
			for _, args := range crawlerCalls(line) {
				n++
				if err := checkCrawlerArgs(args); err != nil {
					t.Errorf("README shows `%s`: %v", line, err)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d crawler command lines in the cluster walkthrough, want its master, slaves and client", n)
	}
}

// shell runs line with sh in dir, as a user would type it.
func shell(t *testing.T, dir string, timeout time.Duration, line string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// background runs line with sh in dir until the test ends, then stops it
// and its children.
func background(t *testing.T, dir, line string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("--- stderr of %s:\n%s", line, tail(out.String(), 3000))
		}
	})
}

// checkJSONLines checks that every line of path is an item.
func checkJSONLines(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, line := range lines {
		var item struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal([]byte(line), &item); err != nil || item.URL == "" {
			t.Fatalf("%s line %d is not an item (%v): %.200s", path, i+1, err, line)
		}
	}
	if len(lines) < 100 {
		t.Errorf("%s holds %d items", path, len(lines))
	}
}

// checkCSV checks that path is a CSV file with a header and rows.
func checkCSV(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 100 || rows[0][0] != "url" {
		t.Errorf("%s: %d rows (%v); want a header and the items", path, len(rows), err)
	}
}

// readmeBlocks returns the ```sh blocks of the README's section under the
// heading (up to the next "## " heading), each as its command lines:
// comments dropped, continuation lines joined.
func readmeBlocks(t *testing.T, path, heading string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks [][]string
	var block []string
	in, inBlock := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in:
			in = strings.HasPrefix(line, heading)
		case !inBlock && strings.HasPrefix(line, "## "):
			in = false
		case !inBlock && strings.HasPrefix(line, "```sh"):
			inBlock, block = true, nil
		case inBlock && strings.HasPrefix(line, "```"):
			inBlock, blocks = false, append(blocks, block)
		case inBlock:
			block = addCommandLine(block, line)
		}
		if !in && len(blocks) > 0 {
			break
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("README has no ```sh block under %q", heading)
	}
	return blocks
}

// addCommandLine adds a line of a shell block to lines: without its
// comment, joined to the previous line when that ends in a backslash.
func addCommandLine(lines []string, line string) []string {
	if i := strings.Index(line, "#"); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return lines
	}
	if n := len(lines); n > 0 && strings.HasSuffix(lines[n-1], "\\") {
		lines[n-1] = strings.TrimSuffix(lines[n-1], "\\") + " " + line
		return lines
	}
	return append(lines, line)
}
