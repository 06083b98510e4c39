package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// roundTripScript is the cheapest script call: what a round trip costs
// Redis besides the work it carries.
var roundTripScript = redis.NewScript("return 1")

// RoundTripWay is one way of sending calls to Redis that RoundTrips
// measures.
type RoundTripWay struct {
	// Name says how the calls were sent.
	Name string
	// Calls is how many were sent, Batch to a round trip, Pause apart.
	Calls, Batch int
	Pause        time.Duration
	// CPU is Redis's CPU time (INFO) per call.
	CPU time.Duration
}

// RoundTrips measures the CPU time Redis spends on one call of an empty
// script sent three ways: back to back, one round trip each; one round
// trip each with a pause between, so that each finds Redis asleep, as the
// calls of a lightly loaded cluster do; and 32 to a pipeline. It explains
// why a cluster's Redis CPU per page falls as its load rises: what a round
// trip costs is shared by the pages it serves.
func RoundTrips(ctx context.Context, redisURL string) ([]RoundTripWay, error) {
	rdb, err := DialRedis(ctx, redisURL)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	if err := roundTripScript.Load(ctx, rdb).Err(); err != nil {
		return nil, fmt.Errorf("bench round trips: load script: %w", err)
	}
	ways := []RoundTripWay{
		{Name: "one per round trip, back to back", Calls: 5000, Batch: 1},
		{Name: "one per round trip, 5 ms apart", Calls: 400, Batch: 1, Pause: 5 * time.Millisecond},
		{Name: "32 to a pipeline", Calls: 32 * 300, Batch: 32},
	}
	for i := range ways {
		if err := measureWay(ctx, rdb, &ways[i]); err != nil {
			return nil, err
		}
	}
	return ways, nil
}

// measureWay sends w's calls and sets w.CPU.
func measureWay(ctx context.Context, rdb redis.UniversalClient, w *RoundTripWay) error {
	before, err := readRedisStats(ctx, rdb)
	if err != nil {
		return err
	}
	for sent := 0; sent < w.Calls; sent += w.Batch {
		if w.Pause > 0 {
			time.Sleep(w.Pause)
		}
		pipe := rdb.Pipeline()
		for range w.Batch {
			roundTripScript.EvalSha(ctx, pipe, nil)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("bench round trips: %w", err)
		}
	}
	after, err := readRedisStats(ctx, rdb)
	if err != nil {
		return err
	}
	w.CPU = (after.CPU - before.CPU) / time.Duration(w.Calls)
	return nil
}

// RoundTripTable is the table of RoundTrips.
func RoundTripTable(ways []RoundTripWay) Table {
	t := Table{Header: []string{"calls of an empty script", "calls", "Redis CPU per call"},
		Notes: []string{"Redis CPU: used_cpu_user + used_cpu_sys of INFO over the calls, the two INFOs included."}}
	for _, w := range ways {
		t.AddRow(w.Name, fmt.Sprint(w.Calls), fmt.Sprintf("%.1f µs", float64(w.CPU)/float64(time.Microsecond)))
	}
	return t
}
