package wake

import (
	"context"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestListen: on a real Redis, the payloads published on the channel
// reach on in order, another channel's do not, and Listen returns once its
// context ends.
func TestListen(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	channel, other := keys.JobsChannel(), keys.TasksChannel(0)
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan string, 10)
	done := make(chan struct{})
	go func() { defer close(done); Listen(ctx, rdb, channel, func(p string) { got <- p }) }()
	testenv.Eventually(t, 30*time.Second, "Listen subscribed", func() bool {
		n, err := rdb.PubSubNumSub(t.Context(), channel).Result()
		return err == nil && n[channel] == 1
	})
	for _, p := range []string{"a", "b"} {
		rdb.Publish(t.Context(), other, "not "+p)
		rdb.Publish(t.Context(), channel, p)
	}
	for _, want := range []string{"a", "b"} {
		select {
		case p := <-got:
			if p != want {
				t.Fatalf("payload %q, want %q", p, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("payload %q never came", want)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Listen did not return after its context ended")
	}
	select {
	case p := <-got:
		t.Errorf("an extra payload %q (another channel's?)", p)
	default:
	}
}
