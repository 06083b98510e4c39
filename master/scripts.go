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

// errJobGone is returned when the job's fencing counter is gone from
// Redis: it restarted empty (without persistence), or the job was reset.
// It counts as fenced (errors.Is(errJobGone, errFenced)): the master stops
// acting on the job, saying what happened rather than blaming another.
var errJobGone error = jobGone{}

type jobGone struct{}

func (jobGone) Error() string {
	return "the job's state is gone from Redis (it restarted empty, or the job was reset); submit the job again to crawl it"
}

func (jobGone) Is(target error) bool { return target == errFenced }

// codes translates the scripts' error replies.
var codes = luascript.Codes{"FENCED": errFenced, "GONE": errJobGone}

var (
	startRoundScript  = luascript.Load(luaFiles, "lua/fence.lua", "lua/start_round.lua")
	seedScript        = luascript.Load(luaFiles, "lua/fence.lua", "lua/kinds.lua", "lua/seed.lua")
	commitListScript  = luascript.Load(luaFiles, "lua/fence.lua", "lua/commit_list.lua")
	commitFoundScript = luascript.Load(luaFiles, "lua/fence.lua", "lua/commit_found.lua")
	queueNextScript   = luascript.Load(luaFiles, "lua/fence.lua", "lua/kinds.lua", "lua/queue_next.lua")
	finishScript      = luascript.Load(luaFiles, "lua/fence.lua", "lua/finish.lua")
	cancelScript      = luascript.Load(luaFiles, "lua/fence.lua", "lua/kinds.lua", "lua/cancel.lua")
	acquireScript     = luascript.Load(luaFiles, "lua/acquire.lua")
	renewScript       = luascript.Load(luaFiles, "lua/renew.lua")
	releaseScript     = luascript.Load(luaFiles, "lua/release.lua")
)
