package notify

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// BenchmarkNotifier_deliver: events recorded on the outboxes of 100 jobs (at most ledger.OutboxMax each),
// each sent to a loopback receiver that accepts at once, by one notifier
// on its default options (4 workers) but the scan interval; it reports
// events/s from the first record to the last acceptance, and the Redis
// commands the notifier sent per event.
func BenchmarkNotifier_deliver(b *testing.B) {
	rdb, keys := testenv.Redis(b)
	r := newReceiver(b, 0)
	ctx := context.Background()
	var jobs []interface {
		RecordEvent(context.Context, string, time.Time) (int64, error)
	}
	for i := range 100 {
		jobs = append(jobs, submitJob(b, rdb, keys, jobWithHooks(fmt.Sprintf("job%d", i), jobspec.Webhook{URL: r.URL + "/h"})))
	}
	opts := fastOptions()
	n, err := New(opts, Deps{Redis: rdb, Keys: keys, Secret: benchSecret(b)})
	if err != nil {
		b.Fatal(err)
	}
	commands := testenv.CountCommands(rdb, func(string, []any) bool { return true })
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	b.ResetTimer()
	start := time.Now()
	before := commands.Load()
	go func() { done <- n.Run(runCtx) }()
	for i := range b.N {
		if _, err := jobs[i%len(jobs)].RecordEvent(ctx, jobspec.EventFinished, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	testenv.Eventually(b, 5*time.Minute, "every event accepted", func() bool {
		got, _ := r.received()
		return len(got) >= b.N
	})
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(commands.Load()-before-int64(2*b.N))/float64(b.N), "notifier-cmds/event")
}

// BenchmarkNotifier_idle: what an idle notifier costs Redis with 100 jobs
// and nothing to send: a GET of the jobs' version each tick, and the
// commands of one sweep of every outbox (one round trip), counted over
// seconds of 10 ms ticks and 100 ms sweeps. At the defaults (a tick a
// second, a sweep every 30 s) a master pays 1 + cmds/sweep / 30 commands
// a second.
func BenchmarkNotifier_idle(b *testing.B) {
	rdb, keys := testenv.Redis(b)
	for i := range 100 {
		submitJob(b, rdb, keys, jobWithHooks(fmt.Sprintf("job%d", i)))
	}
	opts := DefaultOptions()
	opts.Tick, opts.Scan = 10*time.Millisecond, 100*time.Millisecond
	n, err := New(opts, Deps{Redis: rdb, Keys: keys, Secret: benchSecret(b)})
	if err != nil {
		b.Fatal(err)
	}
	gets := testenv.CountCommands(rdb, func(name string, _ []any) bool { return name == "get" })
	sweeps := testenv.CountCommands(rdb, func(name string, _ []any) bool { return name == "zrange" })
	all := testenv.CountCommands(rdb, func(string, []any) bool { return true })
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = n.Run(ctx)
		cancel()
	}
	b.ReportMetric(float64(all.Load()-gets.Load())/float64(sweeps.Load()), "cmds/sweep")
	b.ReportMetric(float64(gets.Load())/b.Elapsed().Seconds(), "gets/s")
	b.ReportMetric(float64(sweeps.Load())/b.Elapsed().Seconds(), "sweeps/s")
}

func benchSecret(b *testing.B) *Secret {
	s := &Secret{}
	key := []byte(testSecret)
	s.key.Store(&key)
	return s
}
