package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/store"
)

// Recent is how many of a job's last failure reasons are kept.
const Recent = 8

// Failure is one recent failure of a job, as the status page lists it.
type Failure struct {
	URL    string    `json:"url"`
	Kind   string    `json:"kind"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Failures are a job's failures by kind and the last few of them.
type Failures struct {
	// ByKind counts the job's failures by kind (KindOf).
	ByKind map[string]int64 `json:"by_kind"`
	// Recent are the last Recent failures, newest first.
	Recent []Failure `json:"recent"`
}

// KindOf names what kind of failure f is, for counting: the kind a
// failure carries when it says more than which page failed
// (extract_limit, missing_field, not_html, robots, offsite), else http_N
// for an error status, else transport (no answer: refused, timed out,
// reset, or a proxy's fault).
func KindOf(f store.Failure) string {
	switch {
	case f.Kind != store.KindDetail && f.Kind != store.KindList && f.Kind != "":
		return f.Kind
	case f.Status != 0:
		return "http_" + strconv.Itoa(f.Status)
	}
	return "transport"
}

func kindsKey(k cluster.Keys, job string) string  { return k.Job(job).Tag() + ":feed:failkinds" }
func recentKey(k cluster.Keys, job string) string { return k.Job(job).Tag() + ":feed:failrecent" }

// Failure counts f by its kind and keeps it among its job's recent ones,
// in one round trip.
func (fd *Feed) Failure(ctx context.Context, f store.Failure) error {
	if fd == nil || fd.rdb == nil {
		return nil
	}
	kind := KindOf(f)
	b, err := json.Marshal(Failure{URL: f.URL, Kind: kind, Reason: f.Reason, At: f.FailedAt})
	if err != nil {
		return fmt.Errorf("publish failure: %w", err)
	}
	pipe := fd.rdb.Pipeline()
	pipe.HIncrBy(ctx, kindsKey(fd.keys, f.Job), kind, 1)
	pipe.LPush(ctx, recentKey(fd.keys, f.Job), b)
	pipe.LTrim(ctx, recentKey(fd.keys, f.Job), 0, Recent-1)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("publish failure of %s: %w", f.Job, err)
	}
	return nil
}

// ReadFailures reads the failures of jobs, in one round trip.
func ReadFailures(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, jobs []string) (map[string]Failures, error) {
	out := make(map[string]Failures, len(jobs))
	if len(jobs) == 0 {
		return out, nil
	}
	pipe := rdb.Pipeline()
	kinds := make([]*redis.MapStringStringCmd, len(jobs))
	recent := make([]*redis.StringSliceCmd, len(jobs))
	for i, j := range jobs {
		kinds[i] = pipe.HGetAll(ctx, kindsKey(keys, j))
		recent[i] = pipe.LRange(ctx, recentKey(keys, j), 0, Recent-1)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read failures: %w", err)
	}
	for i, j := range jobs {
		fs := Failures{ByKind: map[string]int64{}, Recent: []Failure{}}
		for k, v := range kinds[i].Val() {
			fs.ByKind[k], _ = strconv.ParseInt(v, 10, 64)
		}
		for _, s := range recent[i].Val() {
			var f Failure
			if json.Unmarshal([]byte(s), &f) == nil {
				fs.Recent = append(fs.Recent, f)
			}
		}
		out[j] = fs
	}
	return out, nil
}
