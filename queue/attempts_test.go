package queue

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/ledger"
)

// TestLeased_Attempts: each delivery of a task is counted, across lapsed
// leases; a graceful hand-back does not count; the reason a holder gave up
// travels with the next delivery; an acknowledgement forgets it all.
func TestLeased_Attempts(t *testing.T) {
	f := newFixture(t, 0, 2)
	l := f.q.Slave(0)
	first, err := l.Take(f.ctx, 1, 20*time.Millisecond)
	if err != nil || len(first) != 1 {
		t.Fatalf("Take = %+v, %v", first, err)
	}
	if first[0].Count != 1 || first[0].LastError != "" {
		t.Errorf("first delivery = %+v, want count 1 and no reason", first[0])
	}
	markStarted(t, f, l, first[0].Entry)
	if ok, err := l.Note(f.ctx, first[0].Entry, "store item: document too large"); err != nil || !ok {
		t.Fatalf("Note = %v, %v; want recorded", ok, err)
	}
	testenv.Eventually(t, 5*time.Second, "the lease lapses and is reclaimed", func() bool {
		n, err := l.Reclaim(f.ctx)
		return err == nil && n == 1
	})
	second, err := l.Take(f.ctx, 1, time.Minute)
	if err != nil || len(second) != 1 {
		t.Fatalf("Take = %+v, %v", second, err)
	}
	want := Delivery{Entry: first[0].Entry, Count: 2, LastError: "store item: document too large"}
	if second[0] != want {
		t.Errorf("second delivery = %+v, want %+v", second[0], want)
	}

	if n, err := l.Release(f.ctx, []string{second[0].Entry}); err != nil || n != 1 {
		t.Fatalf("Release = %d, %v", n, err)
	}
	third, _ := l.Take(f.ctx, 1, time.Minute)
	if len(third) != 1 || third[0].Count != 2 {
		t.Errorf("after a hand-back the delivery = %+v, want count 2 (a release is not a delivery)", third)
	}

	markStarted(t, f, l, third[0].Entry)
	if n, err := l.Requeue(f.ctx, []string{third[0].Entry}); err != nil || n != 1 {
		t.Fatalf("Requeue = %d, %v", n, err)
	}
	fourth, _ := l.Take(f.ctx, 1, time.Minute)
	if len(fourth) != 1 || fourth[0].Count != 3 {
		t.Errorf("after a requeue the delivery = %+v, want count 3 (a failed attempt counts)", fourth)
	}

	if n, err := l.Ack(f.ctx, []ledger.Outcome{{Task: fourth[0].Entry}}); err != nil || n != 1 {
		t.Fatalf("Ack = %d, %v", n, err)
	}
	if left := f.rdb.HGetAll(f.ctx, f.jk.TaskAttempts()).Val(); len(left) != 0 {
		t.Errorf("attempts after Ack = %v, want none (bounded by the tasks in flight)", left)
	}
	if ok, err := l.Note(f.ctx, fourth[0].Entry, "late"); err != nil || ok {
		t.Errorf("Note after Ack = %v, %v; want not recorded", ok, err)
	}
	if left := f.rdb.HLen(f.ctx, f.jk.TaskAttempts()).Val(); left != 0 {
		t.Errorf("a late Note left %d fields", left)
	}
}

func markStarted(t *testing.T, f *fixture, l *SlaveQueue, entries ...string) {
	t.Helper()
	if n, err := l.MarkStarted(f.ctx, entries); err != nil || n != len(entries) {
		t.Fatalf("MarkStarted = %d, %v; want %d", n, err, len(entries))
	}
}

// TestSlaveQueue_StartMarks: of the deliveries that end without an
// outcome (handed back as orphans, reclaimed after the lease, moved off a
// dead slave), only those whose fetch had begun count toward
// dead-lettering; the others, whose holder died before it began, are
// counted apart. An acknowledgement forgets both.
func TestSlaveQueue_StartMarks(t *testing.T) {
	f := newFixture(t, 0, 2)
	l := f.q.Slave(0)
	begun, waiting := f.tasks[0], f.tasks[1]
	deliver := func(what string) map[string]int {
		t.Helper()
		ds, err := l.Take(f.ctx, 2, time.Minute)
		if err != nil || len(ds) != 2 {
			t.Fatalf("%s: Take = %+v, %v", what, ds, err)
		}
		counts := map[string]int{}
		for _, d := range ds {
			counts[d.Entry] = d.Count
		}
		return counts
	}
	deliver("first")
	markStarted(t, f, l, begun)
	if n, err := l.Requeue(f.ctx, []string{begun, waiting}); err != nil || n != 2 { // the holder died
		t.Fatalf("Requeue = %d, %v", n, err)
	}
	if got := deliver("after the holder died"); got[begun] != 2 || got[waiting] != 1 {
		t.Errorf("deliveries = %v; want the begun task counted 2, the waiting one still 1", got)
	}
	// Its new holder dies too, before beginning either: nothing counts.
	if n, err := f.q.MoveFromSlave(f.ctx, 0, []Move{{Task: begun, To: 0}, {Task: waiting, To: 0}}); err != nil || n != 2 {
		t.Fatalf("MoveFromSlave = %d, %v", n, err)
	}
	if got := deliver("after a move"); got[begun] != 2 || got[waiting] != 1 {
		t.Errorf("deliveries = %v; want 2 and 1 (nothing begun, nothing counted)", got)
	}
	if got := f.rdb.HGet(f.ctx, f.jk.TaskAttempts(), cluster.AttemptUnstartedPrefix+waiting).Val(); got != "2" {
		t.Errorf("unstarted deliveries of the waiting task = %q, want 2", got)
	}
	markStarted(t, f, l, waiting)
	if err := l.Renew(f.ctx, []string{begun, waiting}, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the leases lapse and are reclaimed", func() bool {
		n, err := l.Reclaim(f.ctx)
		return err == nil && n == 2
	})
	if got := deliver("after the lease lapsed"); got[begun] != 2 || got[waiting] != 2 {
		t.Errorf("deliveries = %v; want 2 and 2 (only the waiting task had begun)", got)
	}
	if n, err := l.Ack(f.ctx, []ledger.Outcome{{Task: begun}, {Task: waiting}}); err != nil || n != 2 {
		t.Fatalf("Ack = %d, %v", n, err)
	}
	if left := f.rdb.HGetAll(f.ctx, f.jk.TaskAttempts()).Val(); len(left) != 0 {
		t.Errorf("attempts after Ack = %v, want none", left)
	}
}

// TestSlaveQueue_Ack_deadLetter: a task dead-lettered counts as failed and
// as a dead letter, once.
func TestSlaveQueue_Ack_deadLetter(t *testing.T) {
	f := newFixture(t, 2, 1)
	l := f.q.Slave(2)
	got := take(t, l, f.ctx, 1, time.Minute)
	out := []ledger.Outcome{{Task: got[0], Failed: true, DeadLetter: true}}
	if n, err := l.Ack(f.ctx, out); err != nil || n != 1 {
		t.Fatalf("Ack = %d, %v", n, err)
	}
	if n, _ := l.Ack(f.ctx, out); n != 0 {
		t.Errorf("second Ack counted %d", n)
	}
	want := map[string]string{"failed": "1", "failed:2": "1", "dead_letters": "1"}
	if got := f.stats(t); !reflect.DeepEqual(got, want) {
		t.Errorf("stats = %v, want %v", got, want)
	}
}

// TestQueue_Move: a dead slave's queued and in-flight tasks move to their
// new slaves in one step, the in-flight ones' delivery counted; one
// acknowledged meanwhile does not move.
func TestQueue_Move(t *testing.T) {
	f := newFixture(t, 3, 4)
	dead := f.q.Slave(3)
	inflight := take(t, dead, f.ctx, 2, time.Minute)
	markStarted(t, f, dead, inflight[0])
	if _, err := dead.Ack(f.ctx, []ledger.Outcome{{Task: inflight[1]}}); err != nil {
		t.Fatal(err)
	}
	moves := []Move{{Task: inflight[0], To: 0}, {Task: inflight[1], To: 0}, {Task: f.tasks[2], To: 1}, {Task: f.tasks[3], To: 0}}
	n, err := f.q.MoveFromSlave(f.ctx, 3, moves)
	if err != nil || n != 3 {
		t.Fatalf("MoveFromSlave = %d, %v; want 3 (the acknowledged one stays)", n, err)
	}
	q0, _ := f.items(t, 0)
	q1, _ := f.items(t, 1)
	q3, i3 := f.items(t, 3)
	if !reflect.DeepEqual(q0, []string{inflight[0], f.tasks[3]}) || !reflect.DeepEqual(q1, []string{f.tasks[2]}) ||
		len(q3)+len(i3) != 0 {
		t.Errorf("after the move: slave 0 %q, slave 1 %q, slave 3 %q+%q", q0, q1, q3, i3)
	}
	// The task the dead slave held was delivered once already; the queued
	// one never was.
	ds, err := f.q.Slave(0).Take(f.ctx, 2, time.Minute)
	if err != nil || len(ds) != 2 || ds[0].Count != 2 || ds[1].Count != 1 {
		t.Errorf("deliveries after the move = %+v, %v; want the one held by the dead slave counted 2, the queued one 1", ds, err)
	}

	f.rdb.RPush(f.ctx, f.jk.Retry(), "retried-task")
	if n, err := f.q.MoveFromRetry(f.ctx, []Move{{Task: "retried-task", To: 1}}); err != nil || n != 1 {
		t.Fatalf("MoveFromRetry = %d, %v", n, err)
	}
	if q1, _ := f.items(t, 1); len(q1) != 2 || q1[1] != "retried-task" {
		t.Errorf("slave 1 after retry move = %q", q1)
	}
}

// TestLeased_batches: Take, Ack and Done work a chunk of entries per
// command; across chunk boundaries every delivery is still counted, a task
// listed twice in one Ack counts once, and one no longer in flight not at
// all.
func TestLeased_batches(t *testing.T) {
	const n = 1203 // more than two chunks of 500
	f := newFixture(t, 0, n)
	l := f.q.Slave(0)
	// the same task queued twice in one Take counts as two deliveries
	if err := f.rdb.RPush(f.ctx, f.jk.Queue(0), f.tasks[0]).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := l.Take(f.ctx, n+1, time.Minute)
	if err != nil || len(got) != n+1 {
		t.Fatalf("Take = %d deliveries, %v; want %d", len(got), err, n+1)
	}
	for i, d := range got[:n] {
		if d.Entry != f.tasks[i] || d.Count != 1 {
			t.Fatalf("delivery %d = %+v, want %s counted once", i, d, f.tasks[i])
		}
	}
	if last := got[n]; last.Entry != f.tasks[0] || last.Count != 2 {
		t.Errorf("the task queued twice: second delivery %+v, want count 2", last)
	}
	if hl := f.rdb.HLen(f.ctx, f.jk.TaskAttempts()).Val(); hl != 0 {
		t.Errorf("%d attempt fields after first deliveries, want none: only a failed delivery is written", hl)
	}

	outcomes := []ledger.Outcome{{Task: f.tasks[1]}, {Task: f.tasks[1]}, {Task: "never taken"}}
	for _, task := range f.tasks[2:] {
		outcomes = append(outcomes, ledger.Outcome{Task: task})
	}
	if counted, err := l.Ack(f.ctx, outcomes); err != nil || counted != n-1 {
		t.Fatalf("Ack = %d, %v; want %d (a task listed twice counts once)", counted, err, n-1)
	}
	if stored := f.stats(t)["stored"]; stored != fmt.Sprint(n-1) {
		t.Errorf("stored = %s, want %d", stored, n-1)
	}
	if counted, err := l.Ack(f.ctx, []ledger.Outcome{{Task: f.tasks[0]}, {Task: f.tasks[1]}}); err != nil || counted != 1 {
		t.Errorf("Ack = %d, %v; want 1 (only tasks[0] is still in flight)", counted, err)
	}
	if _, inflight := f.items(t, 0); len(inflight) != 0 {
		t.Errorf("%d tasks still in flight", len(inflight))
	}
	if hl := f.rdb.HLen(f.ctx, f.jk.TaskAttempts()).Val(); hl != 0 {
		t.Errorf("%d attempt fields left", hl)
	}
}

// TestSlaveQueue_MarkStartedOnlyInFlight: a start mark is written for the
// entries still in flight and for no other, however many are marked at
// once (the script works in chunks).
func TestSlaveQueue_MarkStartedOnlyInFlight(t *testing.T) {
	const n = 1203 // more than two of mark.lua's chunks
	f := newFixture(t, 0, n)
	l := f.q.Slave(0)
	ds, err := l.Take(f.ctx, n-1, time.Minute) // the last stays queued
	if err != nil || len(ds) != n-1 {
		t.Fatalf("Take = %d, %v", len(ds), err)
	}
	entries := append([]string{}, f.tasks...) // every task: n-1 in flight, one queued
	entries = append(entries, "never-taken")
	got, err := l.MarkStarted(f.ctx, entries)
	if err != nil || got != n-1 {
		t.Fatalf("MarkStarted = %d, %v; want %d (the ones in flight)", got, err, n-1)
	}
	if hl := f.rdb.HLen(f.ctx, f.jk.TaskAttempts()).Val(); hl != 0 {
		t.Errorf("attempts hash has %d fields, want none (a mark is the lease's score)", hl)
	}
	for _, e := range []string{f.tasks[n-1], "never-taken"} {
		if err := f.rdb.ZScore(f.ctx, f.jk.Inflight(0), e).Err(); err == nil {
			t.Errorf("entry %q not in flight is in the in-flight set", e)
		}
	}
	for _, e := range f.tasks[:n-1] {
		if s := f.rdb.ZScore(f.ctx, f.jk.Inflight(0), e).Val(); s == math.Floor(s) {
			t.Fatalf("entry %q in flight not marked: its lease's score %f is whole", e, s)
		}
	}
	// Marked again, and renewed: it stays marked, once.
	if got, err := l.MarkStarted(f.ctx, f.tasks[:2]); err != nil || got != 2 {
		t.Fatalf("MarkStarted again = %d, %v; want 2", got, err)
	}
	if err := l.Renew(f.ctx, f.tasks[:2], 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.tasks[:2] {
		if s := f.rdb.ZScore(f.ctx, f.jk.Inflight(0), e).Val(); s-math.Floor(s) != 0.5 {
			t.Errorf("entry %q marked twice and renewed: score %f, want a half millisecond over whole", e, s)
		}
	}
}
