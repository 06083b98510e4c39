package master

import (
	"embed"
	"errors"

	"github.com/crawler-dev/crawler/cluster"

	"github.com/crawler-dev/crawler/internal/luascript"
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

// scripts are the package's protocol steps (luascript.Set).
var scripts = luascript.Set{FS: luaFiles, Codes: codes, Consts: luascript.Consts{
	"F_STATE": cluster.StateField, "F_ROUND": cluster.StateRound, "F_STARTED_AT": cluster.StateStartedAt,
	"F_FINISHED_AT": cluster.StateFinishedAt, "F_NEXT_ROUND_AT": cluster.StateNextRoundAt,
	"F_SEEDED": cluster.StateSeeded, "F_CANCEL": cluster.StateCancel, "F_CANCELLED_AT": cluster.StateCancelledAt,
	"S_RUNNING": cluster.StateRunning, "S_FINISHED": cluster.StateFinished,
	"F_STAT_CANCELLED": cluster.StatCancelled, "TASK_RETRY_MARKER": cluster.TaskRetryMarker,
	"R_HELD": leaseHeld, "R_OTHER_ROUND": seedOtherRound,
	"R_ROUND_RUNNING": roundRunning, "R_ROUND_FINISHED": roundFinished, "R_ROUND_CANCEL": roundCancel,
}}

// The replies of scripts that Go tells apart from a count or a token.
const (
	// leaseHeld is acquire's reply when another process holds the job's
	// lease.
	leaseHeld = -1
	// seedOtherRound is seed's reply when the job is no longer at the
	// round the caller seeds.
	seedOtherRound = -1
)

var (
	startRoundScript  = scripts.Load("lua/fence.lua", "lua/start_round.lua")
	seedScript        = scripts.Load("lua/fence.lua", "lua/kinds.lua", "lua/seed.lua")
	commitListScript  = scripts.Load("lua/fence.lua", "lua/commit_list.lua")
	commitFoundScript = scripts.Load("lua/fence.lua", "lua/commit_found.lua")
	queueNextScript   = scripts.Load("lua/fence.lua", "lua/kinds.lua", "lua/queue_next.lua")
	finishScript      = scripts.Load("lua/fence.lua", "lua/finish.lua")
	cancelScript      = scripts.Load("lua/fence.lua", "lua/kinds.lua", "lua/cancel.lua")
	acquireScript     = scripts.Load("lua/acquire.lua")
	renewScript       = scripts.Load("lua/renew.lua")
	releaseScript     = scripts.Load("lua/release.lua")
)
