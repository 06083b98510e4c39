package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// ErrJobActive is returned when a job of the same name is pending or running.
var ErrJobActive = errors.New("a job of that name is already pending or running")

// ErrJobNotFound is returned for a job name that was never submitted.
var ErrJobNotFound = errors.New("no such job")

// submitScript stores a job's spec and marks it pending, unless a job of the
// same name is pending or running. A finished job is submitted anew: its
// counters restart, while its dupefilter keeps what it saw inside the
// window. KEYS: spec, state, stats (one job's hash tag). ARGV: spec JSON, now.
var submitScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[2], 'state')
if state == 'pending' or state == 'running' then return state end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'state', 'pending', 'submitted_at', ARGV[2])
redis.call('HDEL', KEYS[2], 'started_at', 'finished_at', 'next_round_at')
redis.call('DEL', KEYS[3])
return 'ok'
`)

// Submit validates spec and enqueues it for the masters.
func Submit(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, spec *cluster.JobSpec) error {
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", spec.Name, err)
	}
	jk := keys.Job(spec.Name)
	now := time.Now().UTC()
	// The job index lives in another hash slot than the job's keys, so it is
	// written first: masters skip an indexed job whose state is not there yet.
	if err := rdb.ZAddNX(ctx, keys.Jobs(), redis.Z{Score: float64(now.UnixMilli()), Member: spec.Name}).Err(); err != nil {
		return fmt.Errorf("submit job %s: index: %w", spec.Name, err)
	}
	res, err := submitScript.Run(ctx, rdb, []string{jk.Spec(), jk.State(), jk.Stats()},
		raw, now.Format(time.RFC3339Nano)).Text()
	if err != nil {
		return fmt.Errorf("submit job %s: %w", spec.Name, err)
	}
	if res != "ok" {
		return fmt.Errorf("submit job %s: %w (state %s)", spec.Name, ErrJobActive, res)
	}
	return nil
}
