package robots

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set).
var scripts = luascript.Set{FS: luaFiles, Consts: luascript.Consts{
	"F_STATUS": cluster.RobotsStatus, "F_BODY": cluster.RobotsBody,
	"F_FETCHED_AT": cluster.RobotsFetchedAt, "F_EXPIRES_AT": cluster.RobotsExpiresAt,
	"R_FILE": claimFile, "R_FETCH": claimFetch, "R_WAIT": claimWait,
}}

var (
	claimScript   = scripts.Load("lua/claim.lua")
	storeScript   = scripts.Load("lua/store.lua")
	releaseScript = scripts.Load("lua/release.lua")
)

// claim's replies: the file is there, fetch it, or wait for another
// process's fetch.
const (
	claimFile  = "file"
	claimFetch = "fetch"
	claimWait  = "wait"
)

// shared is one origin's robots.txt as the cluster keeps it in Redis.
type shared struct {
	status    int
	body      []byte
	fetchedAt time.Time
	ttl       time.Duration // left before it must be fetched again
}

// claimResult is what claim found: the file, the lease to fetch it, or a
// wait for the process that holds the lease.
type claimResult struct {
	file  *shared
	fetch bool
	wait  time.Duration
}

// store talks to the Redis keys of the robots.txt files.
type store struct {
	rdb  redis.UniversalClient
	keys cluster.Keys
}

// claim reads origin's file or takes the fetch lease under token.
func (s store) claim(ctx context.Context, origin, token string, lease time.Duration) (claimResult, error) {
	k := s.keys.Robots(origin)
	res, err := claimScript.Run(ctx, s.rdb, []string{k.File(), k.Lease()}, token, lease.Milliseconds()).Slice()
	if err != nil {
		return claimResult{}, fmt.Errorf("claim robots.txt of %s: %w", origin, err)
	}
	switch res[0] {
	case claimFetch:
		return claimResult{fetch: true}, nil
	case claimWait:
		return claimResult{wait: time.Duration(toInt(res[1])) * time.Millisecond}, nil
	}
	status, _ := strconv.Atoi(toString(res[1]))
	return claimResult{file: &shared{
		status:    status,
		body:      []byte(toString(res[2])),
		fetchedAt: time.UnixMilli(int64(toInt(res[3]))),
		ttl:       time.Duration(toInt(res[4])) * time.Millisecond,
	}}, nil
}

// put stores origin's file for ttl and gives up the lease.
func (s store) put(ctx context.Context, origin, token string, status int, body []byte, ttl time.Duration) (time.Time, error) {
	k := s.keys.Robots(origin)
	ms, err := storeScript.Run(ctx, s.rdb, []string{k.File(), k.Lease()}, token, ttl.Milliseconds(), status, body).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("store robots.txt of %s: %w", origin, err)
	}
	return time.UnixMilli(ms), nil
}

// release gives up the lease without storing anything.
func (s store) release(ctx context.Context, origin, token string) error {
	k := s.keys.Robots(origin)
	if err := releaseScript.Run(ctx, s.rdb, []string{k.Lease()}, token).Err(); err != nil {
		return fmt.Errorf("release robots.txt lease of %s: %w", origin, err)
	}
	return nil
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

func toInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case string:
		i, _ := strconv.Atoi(n)
		return i
	}
	return 0
}
