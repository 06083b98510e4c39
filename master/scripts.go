package master

import (
	"embed"
	"errors"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
	"github.com/crawler-dev/crawler/ledger"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// errFenced is returned when another master took the job over: this one's
// fencing token is stale and it must stop acting on the job.
var errFenced = errors.New("job taken over by another master (stale fencing token)")

// errJobGone is returned when the job's fencing counter is gone from
// Redis: it restarted empty (without persistence), or the job was reset.
// It counts as fenced (errors.Is(errJobGone, errFenced)): the master stops
// acting on the job, saying what happened rather than blaming another.
var errJobGone error = jobGone{}

type jobGone struct{}

func (jobGone) Error() string {
	return "the job's state is gone from Redis (it restarted empty, or the job was reset); submit the job again to crawl it"
}

func (jobGone) Is(target error) bool { return target == errFenced }

// codes translates the scripts' error replies.
var codes = luascript.Codes{"FENCED": errFenced, "GONE": errJobGone}

// leases are the package's steps on a job's lease, and frontierSteps
// its steps on the frontier (luascript.Set).
var (
	leases        = luascript.Set{FS: luaFiles, Codes: codes, Consts: luascript.Consts{"R_HELD": leaseHeld}}
	frontierSteps = luascript.Set{FS: luaFiles, Codes: codes, Consts: luascript.Consts{
		"F_ROUND": cluster.StateRound, "F_SEEDED": cluster.StateSeeded, "R_OTHER_ROUND": seedOtherRound,
	}}
)

// The replies of scripts that Go tells apart from a count or a token.
const (
	// leaseHeld is acquire's reply when another process holds the job's
	// lease.
	leaseHeld = -1
	// seedOtherRound is seed's reply when the job is no longer at the
	// round the caller seeds.
	seedOtherRound = -1
)

// withLedger composes the package's frontier steps with the job ledger's
// fragments (the per-kind counters, ledger/lua/kinds.lua, and the page
// budget, ledger/lua/budget.lua), and
// fencedLedger the job ledger's steps a master takes (start or finish a
// round, commit a list page or Found entries and their counters, carry a
// cancel out) with the fence alone, which they open with.
var (
	withLedger   = frontierSteps.With(ledger.Fragments)
	fencedLedger = ledger.Steps.With(luascript.Set{FS: luaFiles, Codes: codes})
)

var (
	startRoundScript  = fencedLedger.Load("lua/fence.lua", "lua/start_round.lua")
	seedScript        = withLedger.Load("lua/fence.lua", "lua/budget.lua", "lua/kinds.lua", "lua/seed.lua")
	commitListScript  = fencedLedger.Load("lua/fence.lua", "lua/commit_list.lua")
	commitFoundScript = fencedLedger.Load("lua/fence.lua", "lua/commit_found.lua")
	queueNextScript   = withLedger.Load("lua/fence.lua", "lua/budget.lua", "lua/kinds.lua", "lua/queue_next.lua")
	finishScript      = fencedLedger.Load("lua/fence.lua", "lua/outbox.lua", "lua/finish.lua")
	cancelScript      = fencedLedger.Load("lua/fence.lua", "lua/kinds.lua", "lua/outbox.lua", "lua/cancel.lua")
	acquireScript     = leases.Load("lua/acquire.lua")
	renewScript       = leases.Load("lua/renew.lua")
	releaseScript     = leases.Load("lua/release.lua")
)
