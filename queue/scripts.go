package queue

import (
	"embed"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set): the attempts
// hash's field prefixes (P_) reach Lua as locals of every script's header.
// They move tasks between queued and in flight and count nothing: the
// job's ledger counts (package ledger).
var scripts = luascript.Set{FS: luaFiles, Consts: luascript.Consts{
	"P_COUNT": cluster.AttemptCountPrefix, "P_REASON": cluster.AttemptReasonPrefix,
	"P_UNSTARTED": cluster.AttemptUnstartedPrefix, "TASK_PRIORITY_MARKER": cluster.TaskPriorityMarker,
}}

var (
	takeScript      = scripts.Load("lua/deliver.lua", "lua/take.lua")
	takeBandsScript = scripts.Load("lua/deliver.lua", "lua/take_bands.lua")
	renewScript     = scripts.Load("lua/handback.lua", "lua/renew.lua")
	reclaimScript   = scripts.Load("lua/handback.lua", "lua/reclaim.lua")
	releaseScript   = scripts.Load("lua/handback.lua", "lua/release.lua")
	markScript      = scripts.Load("lua/handback.lua", "lua/mark.lua")
	orphansScript   = scripts.Load("lua/orphans.lua")
	noteScript      = scripts.Load("lua/note.lua")
	moveScript      = scripts.Load("lua/handback.lua", "lua/move.lua")
	stealScript     = scripts.Load("lua/steal.lua")
)
