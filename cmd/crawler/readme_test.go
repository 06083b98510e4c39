package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadme_TwoCommands runs the README's two commands as written, on a
// fresh clone of the repository: the demo must crawl its site and account
// for every link; make test is checked with make -n (running the whole
// suite inside itself would never end), and every command line the README
// shows for a cluster must parse (--help).
func TestReadme_TwoCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.Command("git", "clone", "-q", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	cmds := readmeBlock(t, filepath.Join(clone, "README.md"), "## Two commands")
	if len(cmds) != 2 {
		t.Fatalf("README's two commands: found %q", cmds)
	}
	for _, line := range cmds {
		args := strings.Fields(line)
		if args[0] == "make" {
			args = append([]string{"make", "-n"}, args[1:]...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = clone, cleanEnv()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 3000))
		}
		if args[0] == "go" && !strings.Contains(string(out), "every link accounted for") {
			t.Errorf("%s did not account for every link:\n%s", line, tail(string(out), 2000))
		}
		if args[0] == "go" && !strings.Contains(string(out), ": true") {
			t.Errorf("%s: the counters do not add up:\n%s", line, tail(string(out), 2000))
		}
	}
	for _, line := range readmeBlock(t, filepath.Join(clone, "README.md"), "## A cluster on three hosts") {
		args := strings.Fields(line)
		if len(args) < 2 || args[0] != "crawler" {
			continue
		}
		sub := []string{}
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				break
			}
			sub = append(sub, a)
		}
		if _, stderr, err := crawler(t, time.Minute, append(sub, "--help")...); err != nil {
			t.Errorf("README shows `%s`, but crawler %s --help fails: %v %s", line, strings.Join(sub, " "), err, stderr)
		}
	}
}

// readmeBlock returns the command lines of the first ```sh block after the
// heading, comments and continuation lines joined, without prompts.
func readmeBlock(t *testing.T, path, heading string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	state := 0 // 0: before the heading, 1: before the block, 2: in it
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(line, heading):
			state = 1
		case state == 1 && strings.HasPrefix(line, "```sh"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return lines
		case state == 2:
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if n := len(lines); n > 0 && strings.HasSuffix(lines[n-1], "\\") {
				lines[n-1] = strings.TrimSuffix(lines[n-1], "\\") + " " + line
				continue
			}
			lines = append(lines, line)
		}
	}
	t.Fatalf("README has no ```sh block under %q", heading)
	return nil
}
