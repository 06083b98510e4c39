package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLI_credentials (issue 8, defect 8): a --redis or --mongo URL that
// does not parse, or a server that does not answer, never puts the
// password in the error.
func TestCLI_credentials(t *testing.T) {
	for _, args := range [][]string{
		{"client", "status", "--job", "x", "--redis", "redis://user:hunter2@[bad-host"},
		{"client", "status", "--job", "x", "--redis", "redis://user:hunter2@127.0.0.1:1/0"},
		{"client", "status", "--job", "x", "--redis", "redis://user:hunter2@h1:1,h2:%zz"},
		{"client", "status", "--job", "x", "--redis", "redis+sentinel://:hunter2@127.0.0.1:1/mymaster"},
		{"client", "results", "--job", "x", "--mongo", "mongodb://user:hunter2@%zz/db"},
		{"client", "results", "--job", "x", "--mongo", "mongodb://user:hunter2@127.0.0.1:1/db?serverSelectionTimeoutMS=300&connectTimeoutMS=300"},
	} {
		_, stderr, err := crawler(t, time.Minute, args...)
		if err == nil {
			t.Errorf("crawler %v succeeded", args)
		}
		if strings.Contains(stderr, "hunter2") {
			t.Errorf("crawler %v showed the password:\n%s", args, stderr)
		}
		if !strings.Contains(stderr, "--redis") && !strings.Contains(stderr, "--mongo") {
			t.Errorf("crawler %v: error does not name the flag:\n%s", args, stderr)
		}
	}
}

// TestCLI_zeroMeansZero (issue 8, defect 9): a flag given as 0 where 0 is
// meaningless is an error naming the flag, not silently the default.
func TestCLI_zeroMeansZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"slave", "--id", "0", "--concurrency", "0"}, "--concurrency"},
		{[]string{"slave", "--id", "0", "--max-slaves", "0"}, "--max-slaves"},
		{[]string{"slave", "--id", "70"}, "--id"},
		{[]string{"master", "--list-concurrency", "0"}, "--list-concurrency"},
		{[]string{"master", "--max-slaves", "0"}, "--max-slaves"},
		{[]string{"master", "--job-lease", "0s"}, "--job-lease"},
		{[]string{"run", "--job", "x.yaml", "--concurrency", "0"}, "--concurrency"},
	} {
		_, stderr, err := crawler(t, time.Minute, append(tc.args, "--redis", "redis://127.0.0.1:1/0")...)
		if err == nil || !strings.Contains(stderr, tc.flag) {
			t.Errorf("crawler %v: %v, stderr %q; want an error naming %s", tc.args, err, stderr, tc.flag)
		}
	}
}

// TestCLI_configFileStrict: a --config key that is no flag of any command
// (a typo) is an error naming it, as an unknown field of a job file is; a
// key of another command (a file shared by master and slaves) is not.
func TestCLI_configFileStrict(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("redis: redis://127.0.0.1:1/0\nconcurency: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := crawler(t, time.Minute, "slave", "--id", "0", "--config", typo)
	if err == nil || !strings.Contains(stderr, "concurency") {
		t.Errorf("a config with a typo: %v, stderr %q; want an error naming concurency", err, stderr)
	}
	shared := filepath.Join(dir, "shared.yaml")
	if err := os.WriteFile(shared, []byte("redis: redis://127.0.0.1:1/0\nconcurrency: 8\nlist_concurrency: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, _ = crawler(t, time.Minute, "slave", "--id", "0", "--config", shared)
	if strings.Contains(stderr, "unknown key") {
		t.Errorf("a key of another command was refused: %s", stderr)
	}
	if !strings.Contains(stderr, "--redis: no answer") {
		t.Errorf("the slave did not get as far as Redis with a shared config: %s", stderr)
	}
}

// TestCLI_resultsOfUnknownJob (issue 8): results for a job name the
// database has never seen (a typo, or the wrong --mongo) is an error naming
// the job, not an empty export that looks like a crawl that found nothing.
func TestCLI_resultsOfUnknownJob(t *testing.T) {
	uri, _ := testMongo(t)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	_, stderr, err := crawler(t, time.Minute, "client", "results", "--job", "no-such-job", "--mongo", uri, "-o", out)
	if err == nil || !strings.Contains(stderr, `"no-such-job"`) {
		t.Errorf("results of an unknown job: %v, stderr %q; want an error naming the job", err, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results of an unknown job left %s (stat: %v)", out, err)
	}
}
