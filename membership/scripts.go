package membership

import (
	"embed"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

var (
	registerScript   = load("register.lua")
	heartbeatScript  = load("heartbeat.lua")
	deregisterScript = load("deregister.lua")
	snapshotScript   = load("snapshot.lua")
)

// load composes a node-table script: the prelude, the shared helpers and
// the script itself.
func load(name string) *redis.Script {
	return luascript.Load(luaFiles, "lua/common.lua", "lua/"+name)
}
