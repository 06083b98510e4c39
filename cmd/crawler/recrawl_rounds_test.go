package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/shopsite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// shopJob writes a job that re-crawls the shop every 4 s, each product
// forgotten by the dupefilter 2-3 s after it was admitted, so round 2
// fetches every product again.
func shopJob(t *testing.T, base string) string {
	t.Helper()
	job := fmt.Sprintf(`name: shop
seeds: ["%s/list"]
allow_private_networks: true
detail_link: {css: "a.p"}
fields: {title: {css: "h1", required: true}}
recrawl_every: 4s
dedup: {window: 2s, granularity: 1s, capacity: 10000}
per_host_rps: 1000
per_host_concurrency: 32
`, base)
	path := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitRound waits until round is finished and returns the status.
func waitRound(t *testing.T, env clusterEnv, round int64) client.Status {
	t.Helper()
	var st *client.Status
	testenv.Eventually(t, 2*time.Minute, fmt.Sprintf("round %d finished", round), func() bool {
		var err error
		st, err = jobStatus(context.Background(), env.rdb, env.keys, "shop")
		return err == nil && st.Round == round && st.State == cluster.StateFinished
	})
	return *st
}

// TestRecrawl_Rounds (issue 21): real master and slave processes crawl the
// shop twice; between the rounds 15 of its 150 products change. Round 2
// stores exactly 15 changed and 135 not modified (or, from a site without
// validators, 135 unchanged: the content hash decides, the banner does not
// count), the changed items are version 2 and the others version 1. With
// a slave killed (-9) in the middle of round 2, nothing is lost and
// nothing counted twice. Then client cancel stops the job between rounds.
func TestRecrawl_Rounds(t *testing.T) {
	t.Parallel()
	const pages = 150
	changed := []int{0, 9, 18, 27, 36, 45, 54, 63, 72, 81, 90, 99, 108, 117, 149}
	for _, tc := range []struct {
		name       string
		validators bool
		kill       bool
	}{
		{"validators", true, false},
		{"no-validators", false, false},
		{"validators-kill-slave", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			delay := time.Duration(0)
			if tc.kill {
				delay = 30 * time.Millisecond
			}
			site := shopsite.New(pages, tc.validators, delay)
			srv := httptest.NewServer(site)
			t.Cleanup(srv.Close)
			env := newClusterEnv(t)
			env.masterArgs = append(env.masterArgs, "--job-lease", "2s")
			env.slaveArgs = append(env.slaveArgs, "--concurrency", "2")
			env.startMaster(t, "master")
			slaves := []*proc{env.startSlave(t, 0), env.startSlave(t, 1)}
			env.waitSlaves(t, 0, 1)
			env.submit(t, "shop", shopJob(t, srv.URL))

			first := waitRound(t, env, 1)
			if r := first.Rounds["1"]; r.New != pages || first.Counters.Stored != pages {
				t.Fatalf("round 1: %+v, stored %d; want %d new", r, first.Counters.Stored, pages)
			}
			site.Change(changed...)
			fullBefore := site.Full()
			if tc.kill {
				env.waitProgress(t, "shop", "a third of round 2 stored", func(c client.Counters) bool {
					return c.Stored >= pages+pages/3
				})
				if err := slaves[1].cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				st, err := jobStatus(context.Background(), env.rdb, env.keys, "shop")
				if err != nil || st.Round != 2 || st.State != cluster.StateRunning || st.Counters.Stored >= 2*pages {
					t.Fatalf("the slave was killed after round 2 ended (%+v, %v): the site should be slower", st, err)
				}
			}
			second := waitRound(t, env, 2)
			checkRound2(t, tc.validators, second, pages, len(changed))
			if tc.validators && !tc.kill {
				if got := site.Full() - fullBefore; got != int64(len(changed)) {
					t.Errorf("round 2 downloaded %d products in full, want the %d changed", got, len(changed))
				}
				if got := site.NotModified(); got != int64(pages-len(changed)) {
					t.Errorf("round 2 had %d answers 304, want %d", got, pages-len(changed))
				}
			}
			checkVersions(t, env, srv.URL, changed, pages)
			cancelBetweenRounds(t, env)
		})
	}
}

// checkRound2 checks round 2's counters: exactly the changed products
// changed, and the rest not modified (with validators) or unchanged.
func checkRound2(t *testing.T, validators bool, st client.Status, pages, changed int) {
	t.Helper()
	got := st.Rounds["2"]
	if got.Bytes == 0 {
		t.Error("round 2 counts no bytes fetched")
	}
	want := client.RoundCounts{Changed: int64(changed), Bytes: got.Bytes}
	if validators {
		want.NotModified = int64(pages - changed)
	} else {
		want.Unchanged = int64(pages - changed)
	}
	if got != want {
		t.Errorf("round 2 found %+v, want %+v", got, want)
	}
	c := st.Counters
	if c.Stored != 2*int64(pages) || c.New != int64(pages) || c.Failed != 0 {
		t.Errorf("after two rounds: stored %d, new %d, failed %d; want %d, %d, 0", c.Stored, c.New, c.Failed, 2*pages, pages)
	}
	if c.New+c.Changed+c.Unchanged+c.NotModified != c.Stored {
		t.Errorf("new %d + changed %d + unchanged %d + not modified %d != stored %d",
			c.New, c.Changed, c.Unchanged, c.NotModified, c.Stored)
	}
	if c.Discovered != c.Settled()+c.Queued+c.InFlight {
		t.Errorf("counters do not add up: %+v", c)
	}
}

// checkVersions checks that the changed products are version 2 with their
// new title, and the others version 1.
func checkVersions(t *testing.T, env clusterEnv, base string, changed []int, pages int) {
	t.Helper()
	isChanged := map[string]bool{}
	for _, id := range changed {
		isChanged[fmt.Sprintf("%s/p/%d", base, id)] = true
	}
	items := env.results(t, "shop")
	if len(items) != pages {
		t.Errorf("%d items, want %d", len(items), pages)
	}
	for _, it := range items {
		want := int64(1)
		if isChanged[it.URL] {
			want = 2
		}
		title, _ := it.Fields["title"].(string)
		if it.Version != want || !strings.HasSuffix(title, fmt.Sprintf("version %d", want-1)) || it.ContentHash == "" {
			t.Errorf("%s: version %d, title %q, hash %q; want version %d", it.URL, it.Version, title, it.ContentHash, want)
		}
	}
}

// cancelBetweenRounds cancels the recurring job while it waits for its
// next round: client cancel succeeds and no round is due any more.
func cancelBetweenRounds(t *testing.T, env clusterEnv) {
	t.Helper()
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "cancel", "--job", "shop"}, env.flags()...)...)
	if err != nil {
		t.Fatalf("client cancel between rounds: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	testenv.Eventually(t, time.Minute, "the job cancelled with no next round", func() bool {
		st, err := jobStatus(context.Background(), env.rdb, env.keys, "shop")
		return err == nil && st.State == cluster.StateFinished && st.CancelledAt != "" && st.NextRoundAt == ""
	})
}

// TestRun_RefusesRecurring (issue 21): crawler run crawls one round, so a
// job with recrawl_every or schedule is refused with a message naming the
// field, instead of running one round and exiting without a word.
func TestRun_RefusesRecurring(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"recrawl_every: 1h", `schedule: "0 3 * * *"`} {
		job := fmt.Sprintf("name: shop\nseeds: [\"http://127.0.0.1:1/list\"]\ndetail_link: {css: a}\nfields: {title: {css: h1}}\n%s\n", field)
		path := filepath.Join(t.TempDir(), "shop.yaml")
		if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "items.jsonl")
		_, errOut, err := crawler(t, time.Minute, "run", "--job", path, "-o", out)
		name, _, _ := strings.Cut(field, ":")
		if err == nil || !strings.Contains(errOut, name) || !strings.Contains(errOut, "crawls one round") {
			t.Errorf("crawler run with %s: %v, stderr %q; want a refusal naming %s", field, err, errOut, name)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("crawler run with %s wrote %s", field, out)
		}
	}
}
