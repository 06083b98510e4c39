package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// runCrawler runs the command line in this process and returns what it
// printed on stdout.
func runCrawler(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestRetryFailed_saysWhatItLeaves: a job whose one failure is a
// missing_field, not retryable, prints that none was re-enqueued and why:
// how many failures were left, of which kind.
func TestRetryFailed_saysWhatItLeaves(t *testing.T) {
	t.Parallel()
	_, keys := testenv.Redis(t)
	uri, _ := testenv.MongoDBURI(t)
	flags := []string{"--redis", testenv.RedisURL(), "--prefix", keys.Prefix}
	job := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(job, []byte(demosite.ShopJobYAML("shop", "http://127.0.0.1:1", false)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runCrawler(t, append([]string{"client", "submit", "--job", job}, flags...)...); err != nil {
		t.Fatalf("submit: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := store.OpenMongo(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	err = m.SaveFailure(ctx, store.Failure{ID: store.ItemID("shop", "aa"), URL: "http://127.0.0.1:1/p/1", Job: "shop",
		Kind: extract.FailureMissingField, Reason: "missing required field title", Status: 200, Attempts: 1, FailedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCrawler(t, append([]string{"client", "retry-failed", "--job", "shop", "--mongo", uri}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 failed pages of job shop re-enqueued\n", "1 failure not retryable:\n", "  1 missing_field (the page answered but lacks a required field"} {
		if !strings.Contains(out, want) {
			t.Errorf("retry-failed printed\n%s\nwant %q", out, want)
		}
	}
}
