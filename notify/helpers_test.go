package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
)

// testSecret is the webhook secret of the package's tests.
const testSecret = "0123456789abcdef-test-secret"

// secretFile writes content to a secret file and returns its path.
func secretFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "webhook.secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadTestSecret(t *testing.T) *Secret {
	t.Helper()
	s, err := LoadSecret(secretFile(t, testSecret+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fastOptions are DefaultOptions with waits a test can afford, on
// loopback.
func fastOptions() Options {
	o := DefaultOptions()
	o.AllowPrivateNetworks = true
	o.FirstBackoff, o.MaxBackoff = 20*time.Millisecond, 100*time.Millisecond
	o.Tick, o.Scan = 20*time.Millisecond, 100*time.Millisecond
	return o
}

// delivery is one request a receiver got.
type delivery struct {
	header http.Header
	body   []byte
	event  Event
}

// receiver is a webhook on loopback that answers the first failures
// requests with status 500 and the others with 204 (always 500 with
// failures < 0), and keeps what it received.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []delivery
	failures int
	requests int
}

func newReceiver(t testing.TB, failures int) *receiver {
	r := &receiver{failures: failures}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if r.failures < 0 || r.requests <= r.failures {
		http.Error(w, "not now", http.StatusInternalServerError)
		return
	}
	var ev Event
	_ = json.Unmarshal(body, &ev)
	r.got = append(r.got, delivery{header: req.Header.Clone(), body: body, event: ev})
	w.WriteHeader(http.StatusNoContent)
}

// received returns what the receiver accepted, and how many requests it
// answered in all.
func (r *receiver) received() ([]delivery, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...), r.requests
}

// submitJob stores job spec (and its state, pending) as client submit
// does, indexed among the jobs.
func submitJob(t testing.TB, rdb *redis.Client, keys cluster.Keys, spec jobspec.Job) *ledger.Ledger {
	t.Helper()
	ctx := context.Background()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	led := ledger.New(rdb, keys.Job(spec.Name))
	if active, err := led.Submit(ctx, raw, keys.Job(spec.Name).SeedsStaging("t"), time.Now()); err != nil || active != "" {
		t.Fatalf("submit: %q, %v", active, err)
	}
	if err := rdb.ZAdd(ctx, keys.Jobs(), redis.Z{Score: 1, Member: spec.Name}).Err(); err != nil {
		t.Fatal(err)
	}
	return led
}

// jobWithHooks is a job spec whose notify list names hooks.
func jobWithHooks(name string, hooks ...jobspec.Webhook) jobspec.Job {
	spec := jobspec.Default()
	spec.Name, spec.Seeds, spec.Notify = name, []string{"https://example.com/"}, hooks
	return spec
}

// runNotifier runs a Notifier on opts until the test ends.
func runNotifier(t *testing.T, rdb *redis.Client, keys cluster.Keys, opts Options) {
	t.Helper()
	n, err := New(opts, Deps{Redis: rdb, Keys: keys, Secret: loadTestSecret(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// outboxLen is how many events wait in, or are being sent from, job's
// outbox.
func outboxLen(t *testing.T, rdb *redis.Client, keys cluster.Keys, job string) int64 {
	t.Helper()
	ctx := context.Background()
	jk := keys.Job(job)
	return rdb.LLen(ctx, jk.Outbox()).Val() + rdb.ZCard(ctx, jk.OutboxActive()).Val()
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
