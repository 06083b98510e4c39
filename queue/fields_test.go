package queue

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/ledger"
)

// TestScripts_attemptFieldsFromCluster (issue 9, defect 2): the attempts
// hash's field prefixes are cluster's constants, written into the
// scripts' header (P_COUNT, ...), never retyped as Lua literals: a renamed prefix must not leave a script behind.
func TestScripts_attemptFieldsFromCluster(t *testing.T) {
	names, err := fs.Glob(luaFiles, "lua/*.lua")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded scripts: %v", err)
	}
	for _, name := range names {
		src, err := fs.ReadFile(luaFiles, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{cluster.AttemptCountPrefix, cluster.AttemptReasonPrefix} {
			for _, q := range []string{"'", `"`} {
				if lit := q + prefix + q; strings.Contains(string(src), lit) {
					t.Errorf("%s retypes the attempts field prefix as the literal %s", name, lit)
				}
			}
		}
	}
}

// TestLeased_attemptFields (issue 9, defect 2): on the real Redis and on
// miniredis (the embedded Redis of crawler run), every step of a delivery
// writes and removes the attempts fields named by cluster's prefixes, and
// AttemptFields names the same fields.
func TestLeased_attemptFields(t *testing.T) {
	real, keys := testenv.Redis(t)
	mr := miniredis.RunT(t)
	servers := map[string]redis.UniversalClient{
		"redis":     real,
		"miniredis": redis.NewClient(&redis.Options{Addr: mr.Addr()}),
	}
	for name, rdb := range servers {
		t.Run(name, func(t *testing.T) { checkAttemptFields(t, rdb, keys.Job("fields")) })
	}
}

func checkAttemptFields(t *testing.T, rdb redis.UniversalClient, jk cluster.JobKeys) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	task := cluster.Task{URL: "https://example.com/a", FP: "fpa", Job: "fields"}.Encode()
	rdb.RPush(ctx, jk.Queue(0), task)
	l := New(rdb, jk).Slave(0)
	count, reason := cluster.AttemptCountPrefix+task, cluster.AttemptReasonPrefix+task
	if got := AttemptFields(task); len(got) != 2 || got[0] != count || got[1] != reason {
		t.Errorf("AttemptFields = %q, want %q and %q", got, count, reason)
	}
	field := func(f string) string { return rdb.HGet(ctx, jk.TaskAttempts(), f).Val() }
	mustTake := func(want int) {
		t.Helper()
		ds, err := l.Take(ctx, 1, time.Minute)
		if err != nil || len(ds) != 1 || ds[0].Count != want {
			t.Fatalf("Take = %+v, %v; want one delivery counted %d", ds, err, want)
		}
	}
	mustTake(1)
	if n := rdb.HLen(ctx, jk.TaskAttempts()).Val(); n != 0 {
		t.Errorf("after a first Take, %d attempt fields; want none (only failed deliveries are written)", n)
	}
	if n, err := l.MarkStarted(ctx, []string{task}); err != nil || n != 1 {
		t.Fatalf("MarkStarted = %d, %v", n, err)
	}
	if ok, err := l.Note(ctx, task, "boom"); err != nil || !ok || field(reason) != "boom" {
		t.Errorf("Note = %v, %v; field %q = %q, want boom", ok, err, reason, field(reason))
	}
	if n, err := l.Requeue(ctx, []string{task}); err != nil || n != 1 || field(count) != "1" {
		t.Fatalf("Requeue = %d, %v; field %q = %q, want 1 (a failed delivery counts)", n, err, count, field(count))
	}
	mustTake(2)
	if n, err := l.Release(ctx, []string{task}); err != nil || n != 1 || field(count) != "1" {
		t.Errorf("Release = %d, %v; field %q = %q, want 1 (a hand-back does not count)", n, err, count, field(count))
	}
	mustTake(2)
	if n, err := l.Ack(ctx, []ledger.Outcome{{Task: task}}); err != nil || n != 1 {
		t.Fatalf("Ack = %d, %v", n, err)
	}
	if left := rdb.HGetAll(ctx, jk.TaskAttempts()).Val(); len(left) != 0 {
		t.Errorf("attempts after Ack = %v, want none", left)
	}
	rdb.RPush(ctx, jk.Queue(0), task)
	mustTake(1)
	if n, err := l.Ack(ctx, []ledger.Outcome{{Task: task}}); err != nil || n != 1 {
		t.Fatalf("Ack = %d, %v", n, err)
	}
	if left := rdb.HGetAll(ctx, jk.TaskAttempts()).Val(); len(left) != 0 {
		t.Errorf("attempts after Ack = %v, want none", left)
	}
}
