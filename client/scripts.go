package client

import (
	"embed"

	"github.com/crawler-dev/crawler/cluster"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set).
var scripts = luascript.Set{FS: luaFiles, Consts: luascript.Consts{
	"F_STATE": cluster.StateField, "F_SUBMITTED_AT": cluster.StateSubmittedAt,
	"F_STARTED_AT": cluster.StateStartedAt, "F_FINISHED_AT": cluster.StateFinishedAt,
	"F_NEXT_ROUND_AT": cluster.StateNextRoundAt, "F_CANCEL": cluster.StateCancel,
	"F_CANCELLED_AT": cluster.StateCancelledAt, "S_PENDING": cluster.StatePending,
	"S_RUNNING": cluster.StateRunning, "S_FINISHED": cluster.StateFinished,
	"R_NO_JOB": cancelNoJob, "R_FINISHED_ALREADY": cancelFinishedAlready,
	"R_ASKED": cancelAsked, "R_FINISHED_HERE": cancelFinishedHere,
}}

// The replies of cancel.lua.
const (
	// cancelNoJob: the job does not exist.
	cancelNoJob = -1
	// cancelFinishedAlready: the job is finished and runs no more rounds.
	cancelFinishedAlready = 0
	// cancelAsked: the job's master was asked to stop it.
	cancelAsked = 1
	// cancelFinishedHere: no master holds the job; it was finished (or its
	// next round dropped) by the script itself.
	cancelFinishedHere = 2
)

var (
	submitScript = scripts.Load("lua/submit.lua")
	retryScript  = scripts.Load("lua/retry.lua")
	cancelScript = scripts.Load("lua/cancel.lua")
)
