package queue

import (
	"embed"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set): the attempts
// hash's field prefixes (P_), the job stats fields Ack counts in (F_STAT_)
// and the outcome codes Ack reads (O_, Outcome.code) reach Lua as locals
// of every script's header.
var scripts = luascript.Set{FS: luaFiles, Consts: luascript.Consts{
	"P_COUNT": cluster.AttemptCountPrefix, "P_REASON": cluster.AttemptReasonPrefix,
	"P_STARTED": cluster.AttemptStartedPrefix, "P_UNSTARTED": cluster.AttemptUnstartedPrefix,
	"F_STAT_STORED": cluster.StatStored, "F_STAT_FAILED": cluster.StatFailed,
	"F_STAT_RECOVERED": cluster.StatRecovered, "F_STAT_NEAR_DUPLICATES": cluster.StatNearDuplicates,
	"F_STAT_RETRIES": cluster.StatRetries, "F_STAT_DEAD_LETTERS": cluster.StatDeadLetters,
	"F_STAT_SKIPPED": cluster.StatSkipped, "O_STORED": outcomeStored, "O_FAILED": outcomeFailed,
	"O_SKIPPED": outcomeSkipped, "O_RETRY_STORED": outcomeRetryStored,
	"O_RETRY_FAILED": outcomeRetryFailed, "O_RETRY_SKIPPED": outcomeRetrySkipped,
}}

// The outcome codes of ack.lua: Outcome.code writes them, one letter a
// task.
const (
	outcomeStored       = "s" // stored
	outcomeFailed       = "f" // failed
	outcomeSkipped      = "k" // skipped on purpose
	outcomeRetryStored  = "r" // stored after client retry-failed
	outcomeRetryFailed  = "x" // failed again after client retry-failed
	outcomeRetrySkipped = "q" // skipped after client retry-failed
)

var (
	takeScript     = scripts.Load("lua/take.lua")
	renewScript    = scripts.Load("lua/renew.lua")
	reclaimScript  = scripts.Load("lua/handback.lua", "lua/reclaim.lua")
	releaseScript  = scripts.Load("lua/handback.lua", "lua/release.lua")
	markScript     = scripts.Load("lua/mark.lua")
	expiringScript = scripts.Load("lua/expiring.lua")
	noteScript     = scripts.Load("lua/note.lua")
	doneScript     = scripts.Load("lua/done.lua")
	ackScript      = scripts.Load("lua/ack.lua")
	moveScript     = scripts.Load("lua/handback.lua", "lua/move.lua")
	stealScript    = scripts.Load("lua/steal.lua")
)
