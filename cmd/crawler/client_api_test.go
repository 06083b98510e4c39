package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
)

// TestClient_overAPI (issue 32): the client commands given --api and
// --token-file drive a real cluster through its master's API and print
// what they print through Redis and MongoDB.
func TestClient_overAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens, writeFile, readFile := filepath.Join(dir, "tokens"), filepath.Join(dir, "write"), filepath.Join(dir, "read")
	writeTokenFile(t, tokens, "read "+apiRead+"\nwrite "+apiWrite+"\n")
	writeTokenFile(t, writeFile, apiWrite+"\n")
	writeTokenFile(t, readFile, apiRead+"\n")
	c := startAPICluster(t, 1, "--api-tokens", tokens)
	_, base := serveSite(t, demosite.Options{Details: 80, PerPage: 20, GoneEvery: 40, FlakyEvery: -1})
	viaAPI := []string{"--api", strings.TrimSuffix(c.base, "/api/v1/"), "--token-file", writeFile}
	run := func(args ...string) (string, string, error) {
		t.Helper()
		return crawler(t, time.Minute, append([]string{"client"}, args...)...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, err := run(args...)
		if err != nil {
			t.Fatalf("client %s: %v: %s", strings.Join(args, " "), err, errOut)
		}
		return out
	}

	if out := must(append([]string{"submit", "--job", writeJob(t, "viaapi", base)}, viaAPI...)...); strings.TrimSpace(out) != "viaapi" {
		t.Fatalf("submit printed %q", out)
	}
	// --watch follows the job over the API until it is finished, and
	// prints its last status.
	if out := must(append([]string{"status", "--job", "viaapi", "--watch", "--timeout", "3m", "--json"}, viaAPI...)...); !strings.Contains(out, `"state":"finished"`) {
		t.Fatalf("status --watch over the API ended with:\n%s", out)
	}
	for _, args := range [][]string{{"status", "--job", "viaapi"}, {"status", "--job", "viaapi", "--json"}, {"jobs"}, {"jobs", "--json"}} {
		if api, redis := must(append(args, viaAPI...)...), must(append(args, c.env.flags()...)...); api != redis {
			t.Errorf("client %s prints over the API:\n%s\nand through Redis:\n%s", strings.Join(args, " "), api, redis)
		}
	}
	for _, ext := range []string{"jsonl", "csv", "json"} {
		apiPath, mongoPath := filepath.Join(dir, "api."+ext), filepath.Join(dir, "mongo."+ext)
		_, apiErr, err := run(append([]string{"results", "--job", "viaapi", "-o", apiPath}, viaAPI...)...)
		if err != nil {
			t.Fatalf("results over the API: %v: %s", err, apiErr)
		}
		_, mongoErr, _ := run("results", "--job", "viaapi", "--mongo", c.env.mongo, "-o", mongoPath)
		api, _ := os.ReadFile(apiPath)
		mongo, _ := os.ReadFile(mongoPath)
		if len(api) == 0 || string(api) != string(mongo) || strings.ReplaceAll(apiErr, "api.", "x.") != strings.ReplaceAll(mongoErr, "mongo.", "x.") {
			t.Errorf("results as %s: over the API %d bytes (%s), from MongoDB %d (%s)", ext, len(api), apiErr, len(mongo), mongoErr)
		}
	}
	if out := must(append([]string{"retry-failed", "--job", "viaapi"}, viaAPI...)...); !strings.HasPrefix(out, "2 failed pages of job viaapi re-enqueued") {
		t.Errorf("retry-failed printed %q", out)
	}
	// --wait waits over the API for the job the retry started again.
	if out := must(append([]string{"status", "--job", "viaapi", "--wait", "--timeout", "3m", "--json"}, viaAPI...)...); !strings.Contains(out, `"state":"finished"`) {
		t.Fatalf("status --wait over the API ended with:\n%s", out)
	}

	refusals := map[string][]string{
		"(409)":                           append([]string{"cancel", "--job", "viaapi"}, viaAPI...),
		"(403)":                           {"cancel", "--job", "viaapi", "--api", viaAPI[1], "--token-file", readFile},
		"(401)":                           {"jobs", "--api", viaAPI[1]},
		"give --api or --redis, not both": append([]string{"jobs", "--redis", c.env.redis}, viaAPI...),
		"no such job (404)":               append([]string{"status", "--job", "nosuchjob", "--wait"}, viaAPI...),
	}
	for want, args := range refusals {
		if _, errOut, err := run(args...); err == nil || !strings.Contains(errOut, want) {
			t.Errorf("client %s: %v, stderr %q; want an error with %q", strings.Join(args, " "), err, errOut, want)
		}
	}
	if out := must(append([]string{"reset", "--job", "viaapi", "--yes"}, viaAPI...)...); !strings.HasPrefix(out, "job viaapi reset: ") {
		t.Errorf("reset printed %q", out)
	}
	c.want(t, 404, "GET", "jobs/viaapi", apiRead, "")
}
