package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
)

// ErrJobActive is returned when a job of the same name is pending or running.
var ErrJobActive = errors.New("a job of that name is already pending, running or paused")

// ErrJobNotFound is returned for a job name that was never submitted.
var ErrJobNotFound = errors.New("no such job")

// seedChunk is how many seeds one command writes while staging them.
const seedChunk = 1000

// stagingTTL bounds how long the seeds of a submission that died half-way
// stay in Redis.
const stagingTTL = time.Hour

// Submit validates spec and enqueues it for the masters. The seeds are
// stored apart from the spec, a chunk per command, so a job of a million
// seeds neither blocks Redis nor weighs on every process that loads the
// spec.
func (c *Client) Submit(ctx context.Context, spec *jobspec.Job) error {
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	seeds, err := frontierEntries(spec)
	if err != nil {
		return err
	}
	jk := c.keys.Job(spec.Name)
	if err := c.checkRoom(ctx, spec, jk, seeds); err != nil {
		return fmt.Errorf("submit job %s: %w", spec.Name, err)
	}
	staging := jk.SeedsStaging(stagingToken())
	if err := c.stageSeeds(ctx, staging, seeds); err != nil {
		return fmt.Errorf("submit job %s: %w", spec.Name, err)
	}
	stored := *spec
	stored.Seeds, stored.SeedCount = nil, len(seeds)
	raw, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", spec.Name, err)
	}
	now := time.Now().UTC()
	// The job index lives in another hash slot than the job's keys, so it is
	// written first: masters skip an indexed job whose state is not there yet.
	if err := c.rdb.ZAddNX(ctx, c.keys.Jobs(), redis.Z{Score: float64(now.UnixMilli()), Member: spec.Name}).Err(); err != nil {
		return fmt.Errorf("submit job %s: index: %w", spec.Name, err)
	}
	active, err := ledger.New(c.rdb, jk).Submit(ctx, raw, staging, now)
	if err != nil {
		return fmt.Errorf("submit job %s: %w", spec.Name, err)
	}
	if active != "" {
		return fmt.Errorf("submit job %s: %w (state %s)", spec.Name, ErrJobActive, active)
	}
	c.bumpJobs(ctx)
	return nil
}

// bumpJobs tells idle masters and slaves that a job changed, and wakes
// the masters (cluster.Keys.JobsChannel); they would notice within seconds
// anyway, so a failure here is not the user's.
func (c *Client) bumpJobs(ctx context.Context) {
	pipe := c.rdb.Pipeline()
	pipe.Incr(ctx, c.keys.JobsVersion())
	pipe.Publish(ctx, c.keys.JobsChannel(), "1")
	_, _ = pipe.Exec(ctx)
}

// seedEntryBytes is what Redis spends on one seed besides its bytes: the
// list node and its allocation.
const seedEntryBytes = 48

// checkRoom refuses a job whose dupefilter and seeds Redis cannot hold,
// saying how much they need: a job sized by mistake must not take Redis,
// and every other client of it, down.
func (c *Client) checkRoom(ctx context.Context, spec *jobspec.Job, jk cluster.JobKeys, seeds []any) error {
	opts := dedup.JobOptions(spec.Dedup, jk)
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("job: dedup: %w", err)
	}
	need := dedup.EstimateBytes(opts)
	for _, s := range seeds {
		need += uint64(len(s.(string))) + seedEntryBytes
	}
	info, err := c.rdb.Info(ctx, "memory").Result()
	if err != nil {
		return nil // an embedded Redis (crawler run) reports no memory: no limit known, no check
	}
	mem, err := dedup.ParseRedisMemory(info)
	if err != nil {
		return err
	}
	if err := mem.CheckRoom(need); err != nil {
		return fmt.Errorf("%w (lower dedup.capacity or raise dedup.error_rate, or give Redis more memory)", err)
	}
	return nil
}

// seedEntries canonicalizes and fingerprints the seeds, as the frontier
// keeps list pages: "<40 hex fingerprint> <list page>".
func seedEntries(spec *jobspec.Job) ([]any, error) {
	out := make([]any, 0, len(spec.Seeds))
	for i, s := range spec.Seeds {
		fp, canon, err := canon.URLFingerprint(s)
		if err != nil {
			return nil, fmt.Errorf("job: seeds[%d]: %w", i, err)
		}
		page := cluster.ListPage{URL: canon}
		if kind := spec.SeedKind(s); kind != jobspec.KindStart {
			page.Kind = kind
		}
		out = append(out, fp.String()+" "+page.Encode())
	}
	return out, nil
}

// stageSeeds writes the seeds to the staging list, a chunk per command, in
// one pipeline.
func (c *Client) stageSeeds(ctx context.Context, staging string, seeds []any) error {
	pipe := c.rdb.Pipeline()
	for start := 0; start < len(seeds); start += seedChunk {
		pipe.RPush(ctx, staging, seeds[start:min(start+seedChunk, len(seeds))]...)
	}
	pipe.Expire(ctx, staging, stagingTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("stage %d seeds: %w", len(seeds), err)
	}
	return nil
}

func stagingToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
