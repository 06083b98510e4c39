package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// crawlerCalls finds the crawler command lines in a shell line, such as
// `name=$(crawler client submit --job x.yaml) && crawler client status
// --job "$name" | jq .`: it cuts the line at | && || ; $( and ), and
// returns the words after each "crawler" (or bin/crawler) word, without
// redirections and a trailing &.
func crawlerCalls(line string) [][]string {
	for _, sep := range []string{"$(", ")", "||", "&&", "|", ";"} {
		line = strings.ReplaceAll(line, sep, "\n")
	}
	var calls [][]string
	for _, segment := range strings.Split(line, "\n") {
		words := strings.Fields(segment)
		for i, w := range words {
			if filepath.Base(w) == "crawler" {
				calls = append(calls, withoutRedirections(words[i+1:]))
				break
			}
		}
	}
	return calls
}

// withoutRedirections drops "> file", "2>&1", ">file" and a final "&".
func withoutRedirections(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case w == "&":
		case w == ">" || w == ">>" || w == "<" || w == "2>":
			i++ // and its file
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "<"):
		default:
			out = append(out, w)
		}
	}
	return out
}

// checkCrawlerArgs does what the binary does with args up to running the
// command, with the placeholders documentation uses: it finds the
// subcommand, parses its flags (each must exist, each value must have the
// flag's type) and checks its positional arguments. A "..." word stands
// for flags shown elsewhere and [--flag] for an optional one.
func checkCrawlerArgs(args []string) error {
	var clean []string
	for _, a := range args {
		a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
		clean = append(clean, a)
	}
	root := newRootCmd()
	cmd, rest, err := root.Find(clean)
	if err != nil {
		return err
	}
	if cmd == root && len(rest) == 1 && (rest[0] == "--version" || rest[0] == "--help") {
		return nil
	}
	if !cmd.Runnable() {
		return fmt.Errorf("%q names no runnable command", args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	positional := []string{}
	for _, a := range cmd.Flags().Args() {
		if a != "..." {
			positional = append(positional, a)
		}
	}
	if err := cmd.ValidateArgs(positional); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// TestCheckCrawlerArgs: the checker the README and help tests use refuses
// what the binary refuses, flags above all, and takes the placeholders.
func TestCheckCrawlerArgs(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"crawler master --redis redis://10.0.0.1:6379/0 --htpp 127.0.0.1:8090", // a misspelt flag
		"crawler slave --id zero --redis ...",
		"crawler client submit --concurrency 3", // a slave's flag
		"crawler client",
		"crawler nosuch",
		"bin/crawler run --job x.yaml --out x.jsonl > log.txt",
		"name=$(crawler client submit --jobs x.yaml) && crawler client status --job \"$name\"",
	} {
		calls := crawlerCalls(line)
		failed := false
		for _, args := range calls {
			failed = failed || checkCrawlerArgs(args) != nil
		}
		if len(calls) == 0 || !failed {
			t.Errorf("%s: accepted", line)
		}
	}
	for _, line := range []string{
		"crawler master ... --proxy-source /etc/crawler/proxies.txt",
		"crawler client proxies --redis ... [--all] [--json]",
		"bin/crawler demo --serve-only --listen 127.0.0.1:8080 > demo.yaml &",
		"name=$(crawler client submit --job x.yaml) && crawler client status --job \"$name\" --wait | jq .",
		"crawler --version",
	} {
		calls := crawlerCalls(line)
		if len(calls) == 0 {
			t.Errorf("%s: no crawler command found", line)
		}
		for _, args := range calls {
			if err := checkCrawlerArgs(args); err != nil {
				t.Errorf("%s: %v", line, err)
			}
		}
	}
}

// TestCLI_examplesParse: every example in every command's help parses:
// its flags exist and take the values shown.
func TestCLI_examplesParse(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(strings.ReplaceAll(c.Example, "\\\n", " "), "\n") {
			if i := strings.Index(line, "  #"); i >= 0 {
				line = line[:i]
			}
			for _, args := range crawlerCalls(line) {
				if err := checkCrawlerArgs(args); err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), strings.TrimSpace(line), err)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}
