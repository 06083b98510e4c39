package master

import (
	"embed"
	"errors"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// errFenced is returned when another master took the job over: this one's
// fencing token is stale and it must stop acting on the job.
var errFenced = errors.New("job taken over by another master (stale fencing token)")

// codes translates the scripts' error replies.
var codes = luascript.Codes{"FENCED": errFenced}

var (
	startRoundScript = luascript.Load(luaFiles, "lua/fence.lua", "lua/start_round.lua")
	seedScript       = luascript.Load(luaFiles, "lua/fence.lua", "lua/kinds.lua", "lua/seed.lua")
	commitListScript = luascript.Load(luaFiles, "lua/fence.lua", "lua/commit_list.lua")
	queueNextScript  = luascript.Load(luaFiles, "lua/fence.lua", "lua/kinds.lua", "lua/queue_next.lua")
	finishScript     = luascript.Load(luaFiles, "lua/fence.lua", "lua/finish.lua")
	cancelScript     = luascript.Load(luaFiles, "lua/fence.lua", "lua/kinds.lua", "lua/cancel.lua")
	acquireScript    = luascript.Load(luaFiles, "lua/acquire.lua")
	renewScript      = luascript.Load(luaFiles, "lua/renew.lua")
	releaseScript    = luascript.Load(luaFiles, "lua/release.lua")
)
