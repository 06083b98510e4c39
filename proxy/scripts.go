package proxy

import (
	"embed"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// Record hash fields (cluster.ProxyKeys.Record).
const (
	fieldState         = "state"
	fieldProxy         = "proxy" // the redacted URL
	fieldScheme        = "scheme"
	fieldAddedMS       = "added_ms"
	fieldCheckedMS     = "checked_ms"
	fieldUsableMS      = "usable_ms" // when it first passed a check
	fieldPassedMS      = "passed_ms" // when it last passed a check
	fieldRemovedMS     = "removed_ms"
	fieldReason        = "reason"
	fieldFailedRounds  = "failed_rounds"
	fieldChecks        = "checks"
	fieldChecksOK      = "checks_ok"
	fieldLatencyMS     = "latency_ms"
	fieldSuccess       = "success"
	fieldScore         = "score"
	fieldAnonymity     = "anonymity"
	fieldTunnel        = "tunnel"
	fieldOK            = "ok"
	fieldTimeouts      = "timeouts"
	fieldEvictions     = "evictions"
	fieldBans          = "bans"
	fieldTargetErrors  = "target_errors"
	fieldTimeoutStreak = "timeout_streak"
)

// State is where a proxy is in its life in the pool.
type State string

// The proxy states.
const (
	// StateNew proxies came from a source and wait for their first check.
	StateNew State = "new"
	// StateUsable proxies passed their last check; requests may use them.
	StateUsable State = "usable"
	// StateFailing proxies failed their last check or were evicted by a
	// real request; they are checked again after a backoff.
	StateFailing State = "failing"
	// StateDead proxies were usable once and failed too many rounds.
	StateDead State = "dead"
	// StateRejected proxies never passed a check.
	StateRejected State = "rejected"
)

// Check verdicts the validator records.
const (
	verdictOK     = "ok"
	verdictFail   = "fail"
	verdictReject = "reject"
	verdictHold   = "hold"
	// verdictUnreachable: the judge cannot be reached from the proxy
	// (checker.unreachable), so it was not checked and is not blamed.
	verdictUnreachable = "unreachable"
)

// luaNames are passed as the first ARGV of the record scripts, in the
// order lua/consts.lua reads them.
var luaNames = []string{
	fieldState, fieldProxy, fieldScheme, fieldAddedMS, fieldCheckedMS, fieldUsableMS, fieldPassedMS,
	fieldRemovedMS, fieldReason, fieldFailedRounds, fieldChecks, fieldChecksOK,
	fieldLatencyMS, fieldSuccess, fieldScore, fieldAnonymity, fieldTunnel, fieldOK,
	fieldTimeouts, fieldEvictions, fieldBans, fieldTargetErrors, fieldTimeoutStreak,
	string(StateNew), string(StateUsable), string(StateFailing), string(StateDead), string(StateRejected),
	string(KindOK), string(KindTimeout), string(KindProxyFault), string(KindBanned), string(KindTargetFault),
	verdictOK, verdictFail, verdictReject, verdictHold, verdictUnreachable,
}

// luaNameGroups says which Lua prefix each run of luaNames gets, for the
// test that keeps lua/consts.lua in step.
var luaNameGroups = []struct {
	prefix string
	n      int
}{{"F_", 23}, {"S_", 5}, {"O_", 5}, {"V_", 5}}

var (
	pickScript    = luascript.Load(luaFiles, "lua/pick.lua")
	reportScript  = redisScript("lua/consts.lua", "lua/report.lua")
	admitScript   = redisScript("lua/consts.lua", "lua/admit.lua")
	recordScript  = redisScript("lua/consts.lua", "lua/record.lua")
	dueScript     = redisScript("lua/consts.lua", "lua/due.lua")
	leaseScript   = luascript.Load(luaFiles, "lua/lease.lua")
	renewScript   = luascript.Load(luaFiles, "lua/renew.lua")
	releaseScript = luascript.Load(luaFiles, "lua/release.lua")
)

// Sentinel errors.
var (
	// ErrEmpty means the pool holds no usable proxy at all. A job with
	// proxy: require waits and tries again; proxy: auto goes direct.
	ErrEmpty = errors.New("proxy pool empty")
	// ErrUnavailable means usable proxies exist but none can serve this
	// request now: all are excluded, cooling down, banned for the host or
	// unable to tunnel. It may last: back off before asking again.
	ErrUnavailable = errors.New("no proxy free for this request")
	// ErrBusy means a proxy could serve this request but is at its
	// concurrency cap: a slot frees as soon as a request through it ends,
	// so ask again soon.
	ErrBusy = errors.New("every proxy for this request is at its cap")
	// ErrLeaseHeld means another validator holds the lease.
	ErrLeaseHeld = errors.New("another proxy validator holds the lease")
	// ErrLeaseLost means the validator lost its lease mid-round (it
	// lapsed, or another validator took it): the round's results were not
	// written.
	ErrLeaseLost = errors.New("proxy validator lost its lease mid-round")
	// errBadOutcome means Report was given an unknown outcome kind.
	errBadOutcome = errors.New("unknown proxy outcome")
)

var codes = luascript.Codes{
	"EMPTY":       ErrEmpty,
	"UNAVAILABLE": ErrUnavailable,
	"BUSY":        ErrBusy,
	"BADOUTCOME":  errBadOutcome,
	"LEASELOST":   ErrLeaseLost,
}

// redisScript composes the prelude, the names of lua/consts.lua and one
// script that reads them.
func redisScript(names ...string) *redis.Script {
	return redis.NewScript(luascript.Source(luaFiles, names...))
}

// withNames returns a record script's ARGV: luaNames, then its own.
func withNames(own ...any) []any {
	out := make([]any, 0, len(luaNames)+len(own))
	for _, n := range luaNames {
		out = append(out, n)
	}
	return append(out, own...)
}
