package membership

import (
	"embed"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set). Its Codes are
// the one list of the codes they fail with; Registry.translate maps them
// through it and adds what each reply's detail says.
var scripts = luascript.Set{FS: luaFiles, Consts: luascript.Consts{"F_MAX_SLAVES": ConfigMaxSlaves}, Codes: luascript.Codes{
	"IDTAKEN": ErrIDTaken, "LEASELOST": ErrLeaseLost, "MAXSLAVES": ErrMaxSlavesMismatch}}

var (
	registerScript   = load("register.lua")
	heartbeatScript  = load("heartbeat.lua")
	deregisterScript = load("deregister.lua")
	snapshotScript   = load("snapshot.lua")
)

// load composes a node-table script: the prelude, the shared helpers and
// the script itself.
func load(name string) *redis.Script {
	return scripts.Load("lua/common.lua", "lua/"+name)
}
