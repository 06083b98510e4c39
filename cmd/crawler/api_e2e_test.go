package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

const (
	apiRead  = "team-read-token-0123456789"
	apiWrite = "team-write-token-0123456789"
)

// apiCluster is a cluster whose master serves the API, and how to call it.
type apiCluster struct {
	env    clusterEnv
	base   string // http://127.0.0.1:PORT/api/v1/
	master *proc
}

// startAPICluster starts a master serving --http with the extra master
// flags and slaves 0..slaves-1, and waits until the API answers.
func startAPICluster(t *testing.T, slaves int, masterArgs ...string) *apiCluster {
	t.Helper()
	env := newClusterEnv(t)
	hport := freePort(t)
	env.masterArgs = append([]string{"--http", "127.0.0.1:" + hport}, masterArgs...)
	c := &apiCluster{env: env, base: "http://127.0.0.1:" + hport + "/api/v1/", master: env.startMaster(t, "master")}
	ids := make([]int, slaves)
	for id := range ids {
		ids[id] = id
		env.startSlave(t, id)
	}
	env.waitSlaves(t, ids...)
	testenv.Eventually(t, time.Minute, "the master to serve the API", func() bool {
		resp, err := http.Get(c.base + "openapi.json")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode != http.StatusNotFound
	})
	return c
}

// call sends a request to path under /api/v1/ and returns the reply.
func (c *apiCluster) call(t *testing.T, method, path, token, body string) (int, http.Header, string) {
	t.Helper()
	return testenv.Call(t, method, c.base+path, token, body)
}

// want calls and checks the status, returning the body.
func (c *apiCluster) want(t *testing.T, status int, method, path, token, body string) string {
	t.Helper()
	got, _, reply := c.call(t, method, path, token, body)
	if got != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, got, reply, status)
	}
	if status >= 400 && !strings.HasPrefix(reply, `{"error":`) {
		t.Errorf("%s %s: error reply %q is not {\"error\": ...}", method, path, reply)
	}
	return reply
}

// status reads a job's status over the API.
func (c *apiCluster) status(t *testing.T, job string) client.Status {
	t.Helper()
	var st client.Status
	if err := json.Unmarshal([]byte(c.want(t, 200, "GET", "jobs/"+job, apiRead, "")), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitFinished watches the job's status over the API until it is finished.
func (c *apiCluster) waitFinished(t *testing.T, job string) client.Status {
	t.Helper()
	var st client.Status
	testenv.Eventually(t, 3*time.Minute, "job "+job+" to finish", func() bool {
		st = c.status(t, job)
		return st.State == "finished"
	})
	return st
}

func writeTokenFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAPI_drivesCluster (issue 32): a master serving the API with a
// token file, a slave, a loopback site: a job submitted over the API is
// watched to its end, its items read in each format exactly as client
// results writes them, its failures retried; another job is cancelled and
// reset; tokens are checked, reloaded on SIGHUP, and failures slowed.
func TestAPI_drivesCluster(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	writeTokenFile(t, tokens, "# team\nread "+apiRead+"\nwrite "+apiWrite+"\n")
	c := startAPICluster(t, 1, "--api-tokens", tokens)
	_, base := serveSite(t, demosite.Options{Details: 120, PerPage: 20, GoneEvery: 50, FlakyEvery: -1})

	job := demosite.JobYAML("apijob", base)
	if got := c.want(t, 201, "POST", "jobs", apiWrite, job); strings.TrimSpace(got) != `{"name":"apijob"}` {
		t.Errorf("submit replied %s", got)
	}
	c.want(t, 409, "POST", "jobs", apiWrite, job)
	st := c.waitFinished(t, "apijob")
	if st.Counters.Stored == 0 || st.Counters.Failed != 2 {
		t.Fatalf("apijob finished with counters %+v, want items stored and 2 failed (404s)", st.Counters)
	}
	var jobs []client.Status
	if err := json.Unmarshal([]byte(c.want(t, 200, "GET", "jobs", apiRead, "")), &jobs); err != nil || len(jobs) != 1 || jobs[0].Job != "apijob" {
		t.Errorf("GET jobs: %+v, %v", jobs, err)
	}
	t.Run("items", func(t *testing.T) { checkAPIItems(t, c, "apijob", st.Counters.Stored) })
	t.Run("submit again", func(t *testing.T) { checkAPIResubmit(t, c, job) })
	t.Run("retry-failed", func(t *testing.T) { checkAPIRetry(t, c, "apijob") })
	t.Run("cancel and reset", func(t *testing.T) { checkAPICancelReset(t, c) })
	t.Run("auth", func(t *testing.T) { checkAPIAuth(t, c) })
	t.Run("reload on SIGHUP", func(t *testing.T) { checkAPIReload(t, c, tokens) })
	t.Run("slowed", func(t *testing.T) { checkAPISlowed(t, c) })
	if out := c.master.out.String(); strings.Contains(out, "token-0123456789") {
		t.Error("the master logged a token")
	}
}

// checkAPIItems reads the job's items in each format and compares them
// byte for byte with what client results writes.
func checkAPIItems(t *testing.T, c *apiCluster, job string, stored int64) {
	for _, format := range []string{"jsonl", "json", "csv"} {
		got := c.want(t, 200, "GET", "jobs/"+job+"/items?format="+format, apiRead, "")
		path := filepath.Join(t.TempDir(), "items."+format)
		if _, errOut, err := crawler(t, time.Minute, "client", "results", "--mongo", c.env.mongo, "--job", job, "-o", path); err != nil {
			t.Fatalf("client results: %v: %s", err, errOut)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("items as %s: the API wrote %d bytes, client results %d", format, len(got), len(want))
		}
	}
	if lines := strings.Count(c.want(t, 200, "GET", "jobs/"+job+"/items", apiRead, ""), "\n"); int64(lines) != stored {
		t.Errorf("%d JSON Lines by default, the job stored %d", lines, stored)
	}
	c.want(t, 400, "GET", "jobs/"+job+"/items?format=xml", apiRead, "")
	c.want(t, 404, "GET", "jobs/nosuch/items", apiRead, "")
}

// checkAPIResubmit submits a finished job again: refused within its
// dedup window, saying how to go on, and taken with ?force=true (and a
// priority given in the query: the job's spec holds it).
func checkAPIResubmit(t *testing.T, c *apiCluster, job string) {
	if got := c.want(t, 409, "POST", "jobs", apiWrite, job); !strings.Contains(got, "dupefilter") || !strings.Contains(got, "?force=true") {
		t.Errorf("a finished job submitted again: %s", got)
	}
	c.want(t, 201, "POST", "jobs?force=true&priority=7", apiWrite, job)
	if raw, err := c.env.rdb.Get(context.Background(), c.env.keys.Job("apijob").Spec()).Result(); err != nil ||
		!strings.Contains(raw, `"priority":7`) {
		t.Errorf("spec after ?priority=7: %s, %v; want priority 7", raw, err)
	}
	if st := c.waitFinished(t, "apijob"); st.Counters.Stored != 0 || st.Counters.Duplicates == 0 {
		t.Errorf("the forced run fetched again: %+v", st.Counters)
	}
}

// checkAPIRetry retries the job's failed detail pages (its 404s).
func checkAPIRetry(t *testing.T, c *apiCluster, job string) {
	detail := 0
	for _, f := range c.env.failures(t, job) {
		if f.Kind == store.KindDetail {
			detail++
		}
	}
	var r struct {
		Retried int `json:"retried"`
	}
	if err := json.Unmarshal([]byte(c.want(t, 200, "POST", "jobs/"+job+"/retry-failed", apiWrite, "")), &r); err != nil {
		t.Fatal(err)
	}
	if detail == 0 || r.Retried != detail {
		t.Errorf("retried %d failed pages, the store holds %d failed detail pages", r.Retried, detail)
	}
	c.want(t, 404, "POST", "jobs/nosuch/retry-failed", apiWrite, "")
}

// checkAPICancelReset submits a long job as JSON, cancels it, and resets
// it only once confirmed.
func checkAPICancelReset(t *testing.T, c *apiCluster) {
	_, slow := serveSite(t, demosite.Options{Details: 3000, PerPage: 20, Delay: 200 * time.Millisecond})
	asJSON := `{"name": "slowjob", "seeds": ["` + slow + `/list/1"], "allow_private_networks": true,
		"next_link": {"css": "a.next"}, "detail_link": {"css": ".item a"},
		"fields": {"title": {"css": "h1"}}, "dedup": {"capacity": 100000}}`
	c.want(t, 201, "POST", "jobs", apiWrite, asJSON)
	c.want(t, 409, "DELETE", "jobs/slowjob?confirm=slowjob", apiWrite, "")
	testenv.Eventually(t, 2*time.Minute, "slowjob to be running", func() bool {
		st := c.status(t, "slowjob")
		return st.State == "running" && st.Counters.Discovered > 0
	})
	if got := c.want(t, 200, "POST", "jobs/slowjob/cancel", apiWrite, ""); strings.TrimSpace(got) != `{"name":"slowjob","finished":false}` {
		t.Errorf("cancel of a running job replied %s", got)
	}
	st := c.waitFinished(t, "slowjob")
	if st.CancelledAt == "" {
		t.Errorf("slowjob finished but not cancelled: %+v", st)
	}
	c.want(t, 409, "POST", "jobs/slowjob/cancel", apiWrite, "")
	c.want(t, 400, "DELETE", "jobs/slowjob", apiWrite, "")
	c.want(t, 400, "DELETE", "jobs/slowjob?confirm=apijob", apiWrite, "")
	c.status(t, "slowjob") // still there
	c.want(t, 200, "DELETE", "jobs/slowjob?confirm=slowjob", apiWrite, "")
	c.want(t, 404, "GET", "jobs/slowjob", apiRead, "")
	c.want(t, 404, "DELETE", "jobs/slowjob?confirm=slowjob", apiWrite, "")
}

// checkAPIAuth: no token 401, a read token writing 403 (pause and resume
// too), a token in the query string 400 even when right, a bad name 400,
// a job never submitted 404.
func checkAPIAuth(t *testing.T, c *apiCluster) {
	c.want(t, 401, "GET", "jobs", "", "")
	c.want(t, 403, "POST", "jobs/apijob/cancel", apiRead, "")
	c.want(t, 403, "POST", "jobs/apijob/pause", apiRead, "")
	c.want(t, 403, "POST", "jobs/apijob/resume", apiRead, "")
	c.want(t, 401, "POST", "jobs/apijob/pause", "", "")
	c.want(t, 405, "GET", "jobs/apijob/pause", apiRead, "")
	c.want(t, 404, "POST", "jobs/nosuchjob/pause", apiWrite, "")
	c.want(t, 400, "POST", "jobs/..%2F..%2Fetc/resume", apiWrite, "")
	c.want(t, 403, "DELETE", "jobs/apijob?confirm=apijob", apiRead, "")
	c.want(t, 400, "GET", "jobs?token="+apiRead, "", "")
	c.want(t, 400, "GET", "jobs/..%2F..%2Fetc", apiRead, "")
	c.want(t, 405, "PATCH", "jobs/apijob", apiWrite, "")
	c.want(t, 404, "GET", "nothing", apiRead, "")
	c.want(t, 413, "POST", "jobs", apiWrite, "name: big\n#"+strings.Repeat("x", 11<<20))
	c.status(t, "apijob") // nothing changed
}

// checkAPIReload replaces the write token in the file and sends SIGHUP:
// the new token works, the old one no longer.
func checkAPIReload(t *testing.T, c *apiCluster, tokens string) {
	const newWrite = "team-write-token-rotated-0123456789"
	writeTokenFile(t, tokens, "read "+apiRead+"\nwrite "+newWrite+"\n")
	if err := c.master.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the master to reload its tokens", func() bool {
		return strings.Contains(c.master.out.String(), "api tokens reloaded")
	})
	c.want(t, 200, "GET", "jobs", newWrite, "")
	c.want(t, 401, "GET", "jobs", apiWrite, "")
	writeTokenFile(t, tokens, "write\n")
	if err := c.master.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the master to refuse the bad file", func() bool {
		return strings.Contains(c.master.out.String(), "api tokens not reloaded")
	})
	c.want(t, 200, "GET", "jobs", newWrite, "")
}

// checkAPISlowed sends wrong tokens until the address is refused with 429.
func checkAPISlowed(t *testing.T, c *apiCluster) {
	for range 11 {
		status, hd, body := c.call(t, "GET", "jobs", "wrong-token-guess-0123456789", "")
		if status == http.StatusTooManyRequests {
			if hd.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After: %s", body)
			}
			c.want(t, 429, "GET", "jobs", apiRead, "") // even a right token waits
			return
		}
		if status != http.StatusUnauthorized {
			t.Fatalf("a wrong token: %d %s", status, body)
		}
	}
	t.Error("11 wrong tokens and no 429")
}

// TestAPI_withoutTokens: a master with --http and no token file serves the
// API read-only; a malformed token file stops the master at start, naming
// the line and not the token.
func TestAPI_withoutTokens(t *testing.T) {
	t.Parallel()
	c := startAPICluster(t, 0)
	c.want(t, 200, "GET", "jobs", "", "")
	if got := c.want(t, 403, "POST", "jobs", "", demosite.JobYAML("ro", "http://127.0.0.1:1")); !strings.Contains(got, "--api-tokens") {
		t.Errorf("the refusal does not say how to enable writes: %s", got)
	}
	bad := filepath.Join(t.TempDir(), "tokens")
	writeTokenFile(t, bad, "read "+apiRead+"\nwrte secret-secret-secret\n")
	_, errOut, err := crawler(t, time.Minute, append([]string{"master", "--mongo", c.env.mongo, "--http", "127.0.0.1:0",
		"--api-tokens", bad}, c.env.flags()...)...)
	if err == nil || !strings.Contains(errOut, "line 2") || strings.Contains(errOut, "secret-secret") {
		t.Errorf("a malformed token file: %v, stderr %s", err, errOut)
	}
}
