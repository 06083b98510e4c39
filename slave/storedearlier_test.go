package slave

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// TestSlave_storedEarlierIsFetchedAgain: a task past MaxDeliveries whose
// page an earlier delivery of the same round stored (its holders were
// killed between the store write and the acknowledgement) is fetched once
// more and counted stored, not dead-lettered while its item stands; one
// whose page is not stored, or stored by another round, is dead-lettered
// as before. Seen under chaos on a loaded machine: pages both stored and
// dead-lettered.
func TestSlave_storedEarlierIsFetchedAgain(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := page(t)
	paths := []string{"/stored-this-round", "/never-stored", "/stored-another-round"}
	jk := runningJob(t, ctx, rdb, keys, "grace", site.URL, paths...)
	m := mongoStore(t, ctx)

	opts := DefaultOptions()
	opts.Concurrency, opts.MaxDeliveries = 2, 2
	for i, p := range paths {
		task, err := cluster.DecodeTask(taskFor("grace", site.URL+p))
		if err != nil {
			t.Fatal(err)
		}
		// the next take is delivery MaxDeliveries+1 of a task whose fetches began
		rdb.HSet(ctx, jk.TaskAttempts(), cluster.AttemptCountPrefix+task.Encode(), opts.MaxDeliveries,
			cluster.AttemptReasonPrefix+task.Encode(), "killed")
		if i == 1 {
			continue
		}
		round := task.Round
		if i == 2 {
			round += 3
		}
		it := store.Item{ID: store.ItemID(task.Job, task.FP), URL: task.URL, Job: task.Job, Fingerprint: task.FP,
			Round: round, Fields: map[string]any{"title": "A page"}}
		if res := m.SaveVisits(ctx, time.Now(), []store.Visit{{Item: it}}); res[0].Err != nil {
			t.Fatal(res[0].Err)
		}
	}
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: m})
	testenv.Eventually(t, 45*time.Second, "all three tasks are settled", func() bool {
		st := rdb.HGetAll(ctx, jk.Stats()).Val()
		return st[cluster.StatStored] == "1" && st[cluster.StatDeadLetters] == "2"
	})
	if st := rdb.HGetAll(ctx, jk.Stats()).Val(); st[cluster.StatFailed] != "2" {
		t.Errorf("stats %v: want the two dead letters counted failed, the stored page not", st)
	}
	failures, err := m.Failures(ctx, "grace")
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, f := range failures {
		urls = append(urls, f.URL)
	}
	if slices.Sort(urls); !slices.Equal(urls, []string{site.URL + paths[1], site.URL + paths[2]}) {
		t.Errorf("failure records of %v; want the two pages not stored this round", urls)
	}
}
