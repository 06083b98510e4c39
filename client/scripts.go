package client

import (
	"embed"

	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

var (
	submitScript = luascript.Load(luaFiles, "lua/submit.lua")
	retryScript  = luascript.Load(luaFiles, "lua/retry.lua")
	cancelScript = luascript.Load(luaFiles, "lua/cancel.lua")
)
