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
	"R_NO_JOB": cancelNoJob,
}}

// cancelNoJob is cancel's reply when the job does not exist.
const cancelNoJob = -1

var (
	submitScript = scripts.Load("lua/submit.lua")
	retryScript  = scripts.Load("lua/retry.lua")
	cancelScript = scripts.Load("lua/cancel.lua")
)
