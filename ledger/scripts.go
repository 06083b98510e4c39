package ledger

import (
	"embed"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the ledger's own steps (luascript.Set): the attempts hash's
// field prefixes (P_), the stats fields Ack counts in (F_STAT_) and the
// outcome codes it reads (O_, Outcome.code) reach Lua as locals of every
// script's header.
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

// Admission is the fragment another package's script ends with to admit
// what it checked: lua/admit.lua, which a dupefilter check composes
// (Set.With) and runs as its tail. Its layout of keys and arguments is
// the one the file's comment gives.
var Admission = luascript.Set{FS: luaFiles}

var ackScript = scripts.Load("lua/ack.lua")
