package queue

import (
	"embed"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set).
var scripts = luascript.Set{FS: luaFiles}

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
)
