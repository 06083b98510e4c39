package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/notify"
)

// webhookSecret is the cluster tests' webhook secret.
const webhookSecret = "cluster-webhook-secret-0123456789"

// hookReceiver is a webhook receiver on loopback: it answers 500 to its
// first failures requests (every request with failures < 0), holding the
// first one until hold is closed, and 204 to the others, keeping each
// event it accepted with its headers.
type hookReceiver struct {
	*httptest.Server
	failures int
	hold     chan struct{}
	once     sync.Once

	mu       sync.Mutex
	requests int
	held     bool // the first request is being held
	accepted []hookDelivery
}

type hookDelivery struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T, failures int) *hookReceiver {
	r := &hookReceiver{failures: failures, hold: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	t.Cleanup(r.release)
	return r
}

func (r *hookReceiver) release() { r.once.Do(func() { close(r.hold) }) }

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.requests++
	n := r.requests
	r.held = n == 1
	r.mu.Unlock()
	if n == 1 {
		select {
		case <-r.hold:
		case <-req.Context().Done():
		}
		r.mu.Lock()
		r.held = false
		r.mu.Unlock()
	}
	if r.failures < 0 || n <= r.failures {
		http.Error(w, "receiver down", http.StatusInternalServerError)
		return
	}
	r.mu.Lock()
	r.accepted = append(r.accepted, hookDelivery{header: req.Header.Clone(), body: body})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// state returns the events accepted, how many requests came, and whether
// the first is still held.
func (r *hookReceiver) state() ([]hookDelivery, int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookDelivery(nil), r.accepted...), r.requests, r.held
}

// notifyJob is the demo site's job file with a notify list.
func notifyJob(name, base, notifyYAML string) string {
	return demosite.Job{Name: name, Seeds: []string{base + "/list/1"}, PerHostRPS: 1000, PerHostConcurrency: 16,
		Capacity: 100_000}.YAML() + "notify:\n" + notifyYAML
}

// webhookArgs are the master flags that send webhooks to loopback.
func webhookArgs(t *testing.T) []string {
	path := filepath.Join(t.TempDir(), "webhook.secret")
	if err := os.WriteFile(path, []byte(webhookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--webhook-secret-file", path, "--webhook-allow-private-networks"}
}

// checkEvent verifies a delivery's signature and returns its event.
func checkEvent(t *testing.T, d hookDelivery) notify.Event {
	t.Helper()
	h := d.header
	if err := notify.Verify([]byte(webhookSecret), h.Get(notify.TimestampHeader), h.Get(notify.SignatureHeader), d.body,
		time.Now(), 5*time.Minute); err != nil {
		t.Errorf("signature of %s: %v", d.body, err)
	}
	var ev notify.Event
	if err := json.Unmarshal(d.body, &ev); err != nil {
		t.Fatalf("event %s: %v", d.body, err)
	}
	if h.Get(notify.IDHeader) != ev.ID || h.Get(notify.EventHeader) != ev.Event {
		t.Errorf("headers %v do not match event %s", h, d.body)
	}
	return ev
}

// TestWebhooks_cluster (issue 32): two masters that send webhooks, a
// slave and a site on loopback. The job finishes while its webhook, which
// fails twice first, is still being tried; the finished event then
// arrives once, signed, with the job's counters. A webhook that always
// fails becomes a warning of the job's, which finished all the same.
func TestWebhooks_cluster(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 60, PerPage: 20, GoneEvery: -1, FlakyEvery: -1})
	flaky, down := newHookReceiver(t, 2), newHookReceiver(t, -1)
	down.release()
	env := newClusterEnv(t)
	env.masterArgs = webhookArgs(t)
	env.startMaster(t, "master-b")
	env.startCluster(t, 1)
	env.submitYAML(t, "hooked", notifyJob("hooked", base, fmt.Sprintf(
		"  - {url: %q, events: [finished, failed]}\n  - {url: %q}\n", flaky.URL+"/hooks/crawl?token=t0", down.URL+"/down")))
	st := env.wait(t, "hooked", 2*time.Minute)
	if st.State != "finished" || st.Counters.Stored == 0 {
		t.Fatalf("job ended %s with %d stored", st.State, st.Counters.Stored)
	}
	testenv.Eventually(t, time.Minute, "the first webhook request held", func() bool {
		_, _, held := flaky.state()
		return held
	})
	if got, _, _ := flaky.state(); len(got) != 0 {
		t.Fatalf("the event arrived before the receiver let it: %d", len(got))
	}
	flaky.release()
	testenv.Eventually(t, time.Minute, "the finished event accepted and the outbox empty", func() bool {
		got, _, _ := flaky.state()
		return len(got) == 1 && outboxEmpty(t, env, "hooked")
	})
	got, requests, _ := flaky.state()
	if len(got) != 1 || requests != 3 {
		t.Errorf("the flaky receiver accepted %d events in %d requests, want 1 in 3", len(got), requests)
	}
	ev := checkEvent(t, got[0])
	if ev.Event != "finished" || ev.Job != "hooked" || ev.State != "finished" || ev.Round != 1 ||
		ev.Counters.Stored != st.Counters.Stored || ev.Counters.Discovered != st.Counters.Discovered || ev.FinishedAt != st.FinishedAt {
		t.Errorf("event %+v; status counters %+v finished_at %s", ev, st.Counters, st.FinishedAt)
	}
	testenv.Eventually(t, time.Minute, "the failing webhook among the job's warnings", func() bool {
		s, err := jobStatus(t.Context(), env.rdb, env.keys, "hooked")
		return err == nil && len(s.Warnings) == 1
	})
	warned := statusJSON(t, env, "hooked")
	if len(warned.Warnings) != 1 || !strings.Contains(warned.Warnings[0], down.URL+"/…") ||
		!strings.Contains(warned.Warnings[0], "finished event of round 1") || strings.Contains(warned.Warnings[0], "/down") {
		t.Errorf("client status warnings = %q", warned.Warnings)
	}
	if _, n, _ := down.state(); n != notify.DefaultOptions().Tries {
		t.Errorf("the failing webhook got %d requests, want %d", n, notify.DefaultOptions().Tries)
	}
}

// TestWebhooks_afterRestart: an event recorded while no master could send
// it (its master had no secret, then died) is sent by the master started
// after, once.
func TestWebhooks_afterRestart(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 20, PerPage: 20, GoneEvery: -1, FlakyEvery: -1})
	r := newHookReceiver(t, 0)
	r.release()
	env := newClusterEnv(t)
	first := env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submitYAML(t, "later", notifyJob("later", base, fmt.Sprintf("  - {url: %q}\n", r.URL+"/hook")))
	env.wait(t, "later", 2*time.Minute)
	_ = first.cmd.Process.Kill()
	<-first.done
	if _, n, _ := r.state(); n != 0 || outboxEmpty(t, env, "later") {
		t.Fatalf("before a master could send it: %d requests, outbox empty %v", n, outboxEmpty(t, env, "later"))
	}
	env.masterArgs = webhookArgs(t)
	env.startMaster(t, "master-2")
	testenv.Eventually(t, time.Minute, "the event sent by the new master", func() bool {
		got, _, _ := r.state()
		return len(got) == 1 && outboxEmpty(t, env, "later")
	})
	got, requests, _ := r.state()
	if ev := checkEvent(t, got[0]); ev.Event != "finished" || ev.Job != "later" || requests != 1 {
		t.Errorf("event %+v in %d requests", ev, requests)
	}
}

// TestWebhooks_refusedAtSubmit: client submit refuses bad notify entries,
// naming the entry and what is wrong, and stores nothing.
func TestWebhooks_refusedAtSubmit(t *testing.T) {
	t.Parallel()
	binary(t) // built before the submissions' timeouts start
	env := newClusterEnv(t)
	for entry, want := range map[string]string{
		`{url: "ftp://hooks.example.com/x"}`:                      `notify[0].url: "ftp://hooks.example.com/x": the scheme "ftp" is not http or https`,
		`{url: "https://hooks.example.com/x", events: [started]}`: `notify[0].events[0]: "started" is not one of finished, failed, cancelled, paused`,
		`{url: "not a url"}`:                                      `notify[0].url: "not a url": the scheme "" is not http or https`,
	} {
		path := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(path, []byte(notifyJob("bad", "https://example.com", "  - "+entry+"\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := crawler(t, time.Minute, append([]string{"client", "submit", "--job", path}, env.flags()...)...)
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("submit with %s: %v, stdout %q, stderr %q; want an error saying %q", entry, err, out, errOut, want)
		}
	}
	if _, err := jobStatus(t.Context(), env.rdb, env.keys, "bad"); err == nil {
		t.Error("a refused job was stored")
	}
}

// outboxEmpty reports whether the job's outbox holds no event, waiting or
// being sent.
func outboxEmpty(t *testing.T, env clusterEnv, job string) bool {
	t.Helper()
	jk := env.keys.Job(job)
	return env.rdb.LLen(t.Context(), jk.Outbox()).Val()+env.rdb.ZCard(t.Context(), jk.OutboxActive()).Val() == 0
}

// statusJSON runs client status --json.
func statusJSON(t *testing.T, env clusterEnv, job string) client.Status {
	t.Helper()
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "status", "--job", job, "--json"}, env.flags()...)...)
	if err != nil {
		t.Fatalf("client status: %v %s", err, errOut)
	}
	var st client.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status JSON %q: %v", out, err)
	}
	return st
}
