package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestCLI_credentials (issue 8, defect 8): a --redis or --mongo URL that
// does not parse, or a server that does not answer, never puts the
// password in the error, whole or in part, and the error names the flag
// once.
func TestCLI_credentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		hidden []string // no part of the password may show
	}{
		{[]string{"client", "status", "--job", "x", "--redis", "redis://user:hunter2@[bad-host"}, []string{"hunter2"}},
		{[]string{"client", "status", "--job", "x", "--redis", "redis://user:hunter2@127.0.0.1:1/0"}, []string{"hunter2"}},
		{[]string{"client", "status", "--job", "x", "--redis", "redis://user:hunter2@h1:1,h2:%zz"}, []string{"hunter2"}},
		{[]string{"client", "status", "--job", "x", "--redis", "redis+sentinel://:hunter2@127.0.0.1:1/mymaster"}, []string{"hunter2"}},
		// A password with an unescaped / # or ? is cut by URL parsers,
		// which quote the pieces.
		{[]string{"client", "status", "--job", "x", "--redis", "redis://:abc/def@127.0.0.1:1/0"}, []string{"abc/def", "abc", "def@"}},
		{[]string{"client", "status", "--job", "x", "--redis", "redis://user:s3cr#t@127.0.0.1:1/0"}, []string{"s3cr#t", "s3cr"}},
		{[]string{"client", "status", "--job", "x", "--redis", "redis://user:hunt?er2@127.0.0.1:1/0"}, []string{"hunt", "er2"}},
		{[]string{"client", "status", "--job", "x", "--redis", "redis://user:12/34@127.0.0.1:1/0"}, []string{"12/34", "user:12"}},
		{[]string{"client", "results", "--job", "x", "--mongo", "mongodb://user:hunter2@%zz/db"}, []string{"hunter2"}},
		{[]string{"client", "results", "--job", "x", "--mongo", "mongodb://u:abc/def@127.0.0.1:1/db"}, []string{"abc/def", "abc", "def@"}},
		{[]string{"client", "results", "--job", "x", "--mongo", "mongodb://u:s3cr#t@127.0.0.1:1/db"}, []string{"s3cr"}},
		{[]string{"client", "results", "--job", "x", "--mongo", "mongodb://user:hunter2@127.0.0.1:1/db?serverSelectionTimeoutMS=300&connectTimeoutMS=300"}, []string{"hunter2"}},
		// Secrets in query options (issue 18, item 11).
		{[]string{"client", "results", "--job", "x", "--mongo", "mongodb://127.0.0.1:1/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:t0k3nsecret&serverSelectionTimeoutMS=300"}, []string{"t0k3nsecret"}},
		{[]string{"client", "results", "--job", "x", "--mongo", "mongodb://127.0.0.1:1/db?tls=true&tlsCertificateKeyFile=/nonexistent.pem&tlsCertificateKeyFilePassword=hunter2&serverSelectionTimeoutMS=300"}, []string{"hunter2"}},
	} {
		_, stderr, err := crawler(t, time.Minute, tc.args...)
		if err == nil {
			t.Errorf("crawler %v succeeded", tc.args)
		}
		for _, secret := range tc.hidden {
			if strings.Contains(stderr, secret) {
				t.Errorf("crawler %v showed %q of the password:\n%s", tc.args, secret, stderr)
			}
		}
		flag := tc.args[len(tc.args)-2]
		if n := strings.Count(stderr, flag+":"); n != 1 {
			t.Errorf("crawler %v: error names %s %d times, want once:\n%s", tc.args, flag, n, stderr)
		}
	}
}

// TestCLI_zeroMeansZero (issue 8, defect 9): a flag given as 0 where 0 is
// meaningless is an error naming the flag, not silently the default.
func TestCLI_zeroMeansZero(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// TestCLI_mongoUnreachable (issue 18, item 6): a master whose MongoDB does
// not answer says what it tried and that --output exists, not the
// driver's server-selection error.
func TestCLI_mongoUnreachable(t *testing.T) {
	t.Parallel()
	_, keys := testenv.Redis(t)
	_, stderr, err := crawler(t, 3*time.Minute, "master", "--redis", testenv.RedisURL(), "--prefix", keys.Prefix,
		"--mongo", "mongodb://127.0.0.1:1/db?serverSelectionTimeoutMS=300")
	if err == nil {
		t.Fatal("a master with an unreachable MongoDB started")
	}
	for _, want := range []string{"no MongoDB answered", "127.0.0.1:1", "--output"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, tail(stderr, 2000))
		}
	}
	if strings.Contains(stderr, "topology") {
		t.Errorf("stderr shows the driver's topology:\n%s", tail(stderr, 2000))
	}
}

// TestCLI_pprofNeedsMetrics: --pprof without --metrics, where the
// profiles would be served, is an error naming both, before anything
// connects; with --metrics the process serves them there.
func TestCLI_pprofNeedsMetrics(t *testing.T) {
	for _, args := range [][]string{{"slave", "--id", "0"}, {"master"}, {"run", "--job", "x.yaml", "-o", "x.jsonl"}} {
		_, stderr, err := crawler(t, time.Minute, append(args, "--pprof", "--redis", "redis://127.0.0.1:1/0")...)
		if err == nil || !strings.Contains(stderr, "--pprof: needs --metrics") {
			t.Errorf("crawler %v --pprof: %v, stderr %q; want an error naming --pprof and --metrics", args, err, stderr)
		}
	}
}

// TestCLI_cpuProfile: the hidden --cpu-profile (crawler-bench site
// --stages) writes a CPU profile of the process, gzipped protobuf, by the
// time it exits; a path that cannot be created is an error naming it.
func TestCLI_cpuProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "version.pprof")
	if _, stderr, err := crawler(t, time.Minute, "version", "--cpu-profile", path); err != nil {
		t.Fatalf("crawler version --cpu-profile: %v, stderr %q", err, stderr)
	}
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Fatalf("profile %s: %v, %d bytes; want a gzipped profile", path, err, len(raw))
	}
	_, stderr, err := crawler(t, time.Minute, "version", "--cpu-profile", filepath.Join(path, "nowhere", "x.pprof"))
	if err == nil || !strings.Contains(stderr, "--cpu-profile:") {
		t.Errorf("crawler version --cpu-profile into a missing directory: %v, stderr %q; want an error naming the flag", err, stderr)
	}
}
