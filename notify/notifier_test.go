package notify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestNotifier_delivers: an event recorded on a job's outbox reaches each
// webhook that asks for it once, though two notifiers run and one
// receiver fails twice first; it carries the job's state and counters;
// the outbox is left empty.
func TestNotifier_delivers(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	flaky, other, deaf := newReceiver(t, 2), newReceiver(t, 0), newReceiver(t, 0)
	led := submitJob(t, rdb, keys, jobWithHooks("news",
		jobspec.Webhook{URL: flaky.URL + "/hook"},
		jobspec.Webhook{URL: other.URL + "/hook", Events: []string{jobspec.EventCancelled, jobspec.EventPaused}},
		jobspec.Webhook{URL: deaf.URL + "/hook", Events: []string{jobspec.EventFinished}}))
	ctx := context.Background()
	rdb.HSet(ctx, keys.Job("news").Stats(), cluster.StatStored, 7, cluster.StatRouted, 9, cluster.StatDuplicates, 2)
	id, err := led.RecordEvent(ctx, jobspec.EventPaused, time.Now())
	if err != nil || id != 1 {
		t.Fatalf("RecordEvent = %d, %v", id, err)
	}
	runNotifier(t, rdb, keys, fastOptions())
	runNotifier(t, rdb, keys, fastOptions())
	testenv.Eventually(t, 10*time.Second, "the paused event sent to both webhooks that ask for it", func() bool {
		a, _ := flaky.received()
		b, _ := other.received()
		return len(a) == 1 && len(b) == 1 && outboxLen(t, rdb, keys, "news") == 0
	})
	got, requests := flaky.received()
	ev := got[0].event
	if requests != 3 || ev.Event != jobspec.EventPaused || ev.Job != "news" || ev.State != cluster.StatePending ||
		ev.Counters.Stored != 7 || ev.Counters.Discovered != 11 || ev.ID == "" {
		t.Errorf("after %d requests: event %+v", requests, ev)
	}
	if b, _ := other.received(); b[0].event.ID != ev.ID {
		t.Errorf("event IDs %q and %q differ", b[0].event.ID, ev.ID)
	}
	if _, n := deaf.received(); n != 0 {
		t.Errorf("a webhook that asks for finished only got %d requests for paused", n)
	}
	if n := rdb.HLen(ctx, keys.Job("news").NotifySent()).Val(); n != 0 {
		t.Errorf("%d sent marks left once the event left the outbox", n)
	}
	if a, n := flaky.received(); len(a) != 1 || n != 3 {
		t.Errorf("the flaky webhook got %d events in %d requests once all was done, want 1 in 3", len(a), n)
	}
}

// TestNotifier_failingWebhook: a webhook that never answers 2xx is tried
// Options.Tries times, then shows among the job's warnings in client
// status, without its path; the event leaves the outbox.
func TestNotifier_failingWebhook(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	down := newReceiver(t, -1)
	led := submitJob(t, rdb, keys, jobWithHooks("news", jobspec.Webhook{URL: down.URL + "/private-token"}))
	if _, err := led.RecordEvent(context.Background(), jobspec.EventFinished, time.Now()); err != nil {
		t.Fatal(err)
	}
	opts := fastOptions()
	opts.Tries = 3
	runNotifier(t, rdb, keys, opts)
	cl, err := client.New(rdb, client.Options{Keys: keys, MaxSlaves: 4})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	testenv.Eventually(t, 10*time.Second, "a warning on the job", func() bool {
		st, err := cl.Status(context.Background(), "news")
		if err != nil {
			return false
		}
		warnings = st.Warnings
		return len(warnings) == 1 && outboxLen(t, rdb, keys, "news") == 0
	})
	w := warnings[0]
	if !strings.Contains(w, "webhook "+down.URL+"/…") || !strings.Contains(w, "finished event") ||
		!strings.Contains(w, "after 3 tries") || strings.Contains(w, "private-token") {
		t.Errorf("warning %q", w)
	}
	if _, n := down.received(); n != 3 {
		t.Errorf("the failing webhook got %d requests, want 3", n)
	}
}

// TestNotifier_takesOver: an event whose sender died holding it is sent
// once its lease lapses, but not again to the webhook that had it (a
// sent mark); a job without webhooks has its events dropped; an event
// redelivered more than MaxDeliveries times is given up with a warning.
func TestNotifier_takesOver(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	had, missed := newReceiver(t, 0), newReceiver(t, 0)
	led := submitJob(t, rdb, keys, jobWithHooks("news",
		jobspec.Webhook{URL: had.URL + "/h"}, jobspec.Webhook{URL: missed.URL + "/h"}))
	quiet := submitJob(t, rdb, keys, jobWithHooks("quiet"))
	for _, l := range []interface {
		RecordEvent(context.Context, string, time.Time) (int64, error)
	}{led, quiet} {
		if _, err := l.RecordEvent(ctx, jobspec.EventCancelled, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	dead := newOutbox(rdb, keys, "news")
	ds, err := dead.events.Take(ctx, 1, time.Millisecond) // a sender that dies at once
	if err != nil || len(ds) != 1 {
		t.Fatalf("Take = %v, %v", ds, err)
	}
	if err := dead.markSent(ctx, 1, had.URL+"/h"); err != nil {
		t.Fatal(err)
	}
	runNotifier(t, rdb, keys, fastOptions())
	testenv.Eventually(t, 10*time.Second, "the event taken over and sent", func() bool {
		got, _ := missed.received()
		return len(got) == 1 && outboxLen(t, rdb, keys, "news") == 0 && outboxLen(t, rdb, keys, "quiet") == 0
	})
	if _, n := had.received(); n != 0 {
		t.Errorf("the webhook marked sent got %d requests", n)
	}
}

// TestNotifier_poison: an event taken more than MaxDeliveries times by
// senders that died is given up, with a warning naming why.
func TestNotifier_poison(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	r := newReceiver(t, 0)
	led := submitJob(t, rdb, keys, jobWithHooks("news", jobspec.Webhook{URL: r.URL + "/h"}))
	if _, err := led.RecordEvent(ctx, jobspec.EventFailed, time.Now()); err != nil {
		t.Fatal(err)
	}
	opts := fastOptions()
	box := newOutbox(rdb, keys, "news")
	for range opts.MaxDeliveries {
		if _, err := box.events.Take(ctx, 1, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := box.events.Reclaim(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runNotifier(t, rdb, keys, opts)
	testenv.Eventually(t, 10*time.Second, "the event given up", func() bool { return outboxLen(t, rdb, keys, "news") == 0 })
	if _, n := r.received(); n != 0 {
		t.Errorf("a given-up event was sent %d times", n)
	}
	w := rdb.HGet(ctx, keys.Job("news").NotifyWarnings(), r.URL+"/h").Val()
	if !strings.Contains(w, "failed event") || !strings.Contains(w, "senders stopped 5 times") {
		t.Errorf("warning %q", w)
	}
}
