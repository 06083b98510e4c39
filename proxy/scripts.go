package proxy

import (
	"embed"
	"errors"

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

// luaConsts are the pool's names as its scripts read them
// (luascript.Set): record hash fields (F_), proxy states (S_), outcome
// kinds (O_) and check verdicts (V_).
var luaConsts = luascript.Consts{
	"F_STATE": fieldState, "F_PROXY": fieldProxy, "F_SCHEME": fieldScheme, "F_ADDED_MS": fieldAddedMS,
	"F_CHECKED_MS": fieldCheckedMS, "F_USABLE_MS": fieldUsableMS, "F_PASSED_MS": fieldPassedMS,
	"F_REMOVED_MS": fieldRemovedMS, "F_REASON": fieldReason, "F_FAILED_ROUNDS": fieldFailedRounds,
	"F_CHECKS": fieldChecks, "F_CHECKS_OK": fieldChecksOK, "F_LATENCY_MS": fieldLatencyMS,
	"F_SUCCESS": fieldSuccess, "F_SCORE": fieldScore, "F_ANONYMITY": fieldAnonymity, "F_TUNNEL": fieldTunnel,
	"F_OK": fieldOK, "F_TIMEOUTS": fieldTimeouts, "F_EVICTIONS": fieldEvictions, "F_BANS": fieldBans,
	"F_TARGET_ERRORS": fieldTargetErrors, "F_TIMEOUT_STREAK": fieldTimeoutStreak,
	"S_NEW": string(StateNew), "S_USABLE": string(StateUsable), "S_FAILING": string(StateFailing),
	"S_DEAD": string(StateDead), "S_REJECTED": string(StateRejected),
	"O_OK": string(KindOK), "O_TIMEOUT": string(KindTimeout), "O_PROXY": string(KindProxyFault),
	"O_BAN": string(KindBanned), "O_TARGET": string(KindTargetFault),
	"V_OK": verdictOK, "V_REJECT": verdictReject, "V_HOLD": verdictHold,
	"V_UNREACHABLE": verdictUnreachable,
}

// scripts are the package's protocol steps.
var scripts = luascript.Set{FS: luaFiles, Consts: luaConsts, Codes: codes}

var (
	pickScript    = scripts.Load("lua/pick.lua")
	reportScript  = scripts.Load("lua/consts.lua", "lua/report.lua")
	admitScript   = scripts.Load("lua/consts.lua", "lua/admit.lua")
	recordScript  = scripts.Load("lua/consts.lua", "lua/record.lua")
	dueScript     = scripts.Load("lua/consts.lua", "lua/due.lua")
	leaseScript   = scripts.Load("lua/lease.lua")
	renewScript   = scripts.Load("lua/renew.lua")
	releaseScript = scripts.Load("lua/release.lua")
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
