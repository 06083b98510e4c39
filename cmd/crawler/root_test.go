package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestResolveFlags: a flag given on the command line beats CRAWLER_<FLAG>,
// which beats the --config file, which beats the default.
func TestResolveFlags(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "crawler.yaml")
	err := os.WriteFile(cfg, []byte("redis: redis://file:6379/0\nmongo: mongodb://file/crawler\nconcurrency: 7\nlog_format: json\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRAWLER_MONGO", "mongodb://env/crawler")
	t.Setenv("CRAWLER_CONCURRENCY", "9")

	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	redisURL := fs.String("redis", "redis://default:6379/0", "")
	mongo := fs.String("mongo", "mongodb://default/crawler", "")
	concurrency := fs.Int("concurrency", 32, "")
	logFormat := fs.String("log-format", "console", "")
	prefix := fs.String("prefix", "crawler", "")
	if err := fs.Parse([]string{"--concurrency", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := resolveFlags(fs, cfg, map[string]bool{"redis": true, "mongo": true, "concurrency": true, "log-format": true}); err != nil {
		t.Fatal(err)
	}
	checks := []struct{ what, got, want string }{
		{"flag beats env and file", strconv.Itoa(*concurrency), "3"},
		{"env beats file", *mongo, "mongodb://env/crawler"},
		{"file beats default", *redisURL, "redis://file:6379/0"},
		{"file key with underscores", *logFormat, "json"},
		{"default when nothing is set", *prefix, "crawler"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
		}
	}

	t.Run("bad values name their source", func(t *testing.T) {
		t.Setenv("CRAWLER_CONCURRENCY", "many")
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.Int("concurrency", 32, "")
		err := resolveFlags(fs, "", nil)
		if err == nil || !strings.Contains(err.Error(), "CRAWLER_CONCURRENCY") {
			t.Errorf("error %v, want one naming CRAWLER_CONCURRENCY", err)
		}
	})
	t.Run("missing config file", func(t *testing.T) {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		err := resolveFlags(fs, filepath.Join(t.TempDir(), "nope.yaml"), nil)
		if err == nil || !strings.Contains(err.Error(), "config") {
			t.Errorf("error %v, want one about the config file", err)
		}
	})
}

// TestUnknownFlag_suggests: a mistyped flag is answered with the
// command's nearest flag, inherited ones included; a name near nothing
// gets no suggestion.
func TestUnknownFlag_suggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"client", "jobs", "--jsn"}, "unknown flag: --jsn (did you mean --json?)"},
		{[]string{"client", "status", "--wach"}, "(did you mean --watch?)"},
		{[]string{"run", "--outp", "x.jsonl"}, "(did you mean --output?)"},
		{[]string{"check", "--log-levle", "debug"}, "(did you mean --log-level?)"},
		{[]string{"client", "jobs", "--zzzzzz"}, "unknown flag: --zzzzzz"},
	} {
		root := newRootCmd()
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("crawler %s: %v, want an error ending %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
