package queue

import (
	"embed"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

var (
	takeScript     = luascript.Load(luaFiles, "lua/take.lua")
	renewScript    = luascript.Load(luaFiles, "lua/renew.lua")
	reclaimScript  = luascript.Load(luaFiles, "lua/handback.lua", "lua/reclaim.lua")
	releaseScript  = luascript.Load(luaFiles, "lua/handback.lua", "lua/release.lua")
	markScript     = luascript.Load(luaFiles, "lua/mark.lua")
	expiringScript = luascript.Load(luaFiles, "lua/expiring.lua")
	noteScript     = luascript.Load(luaFiles, "lua/note.lua")
	doneScript     = luascript.Load(luaFiles, "lua/done.lua")
	ackScript      = luascript.Load(luaFiles, "lua/ack.lua")
	moveScript     = luascript.Load(luaFiles, "lua/handback.lua", "lua/move.lua")
)
