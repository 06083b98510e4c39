package ledger

import (
	"embed"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
	"github.com/crawler-dev/crawler/jobspec"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// Steps is the ledger's script set (luascript.Set): every step that
// changes a job's state hash or counters. The state hash's fields (F_)
// and states (S_), the stats fields (F_STAT_), the attempts hash's field
// prefixes (P_), the outcome codes Ack reads (O_, Outcome.code), who acts
// in a cancel (A_), the events of the outbox (E_, lua/outbox.lua) and
// the replies Go tells apart (R_) reach Lua as
// locals of every script's header. Ledger's methods run the steps any
// process may take; a master runs its own (cancel carried out, a round
// started or finished) composed after its fence (Steps.With). The codes
// the steps fail with are the package's sentinels (codes).
var Steps = luascript.Set{FS: luaFiles, Consts: luascript.Consts{
	"F_STATE": cluster.StateField, "F_ROUND": cluster.StateRound, "F_SUBMITTED_AT": cluster.StateSubmittedAt,
	"F_STARTED_AT": cluster.StateStartedAt, "F_FINISHED_AT": cluster.StateFinishedAt,
	"F_NEXT_ROUND_AT": cluster.StateNextRoundAt, "F_SEEDED": cluster.StateSeeded,
	"F_CANCEL": cluster.StateCancel, "F_CANCELLED_AT": cluster.StateCancelledAt,
	"F_PAUSED_AT": cluster.StatePausedAt, "F_PAUSED_FROM": cluster.StatePausedFrom,
	"F_BUDGET_REACHED": cluster.StateBudgetReached,
	"S_PENDING":        cluster.StatePending, "S_RUNNING": cluster.StateRunning, "S_FINISHED": cluster.StateFinished,
	"S_PAUSED": cluster.StatePaused,
	"P_COUNT":  cluster.AttemptCountPrefix, "P_REASON": cluster.AttemptReasonPrefix,
	"P_UNSTARTED":   cluster.AttemptUnstartedPrefix,
	"F_STAT_STORED": cluster.StatStored, "F_STAT_FAILED": cluster.StatFailed,
	"F_STAT_RECOVERED": cluster.StatRecovered, "F_STAT_NEAR_DUPLICATES": cluster.StatNearDuplicates,
	"F_STAT_RETRIES": cluster.StatRetries, "F_STAT_DEAD_LETTERS": cluster.StatDeadLetters,
	"F_STAT_SKIPPED": cluster.StatSkipped, "F_STAT_CANCELLED": cluster.StatCancelled,
	"TASK_RETRY_MARKER": cluster.TaskRetryMarker,
	"O_STORED":          outcomeStored, "O_FAILED": outcomeFailed, "O_SKIPPED": outcomeSkipped,
	"O_RETRY_STORED": outcomeRetryStored, "O_RETRY_FAILED": outcomeRetryFailed, "O_RETRY_SKIPPED": outcomeRetrySkipped,
	"A_ASK": actorAsk, "A_BUDGET": actorBudget,
	"R_NO_JOB": int(CancelNoJob), "R_FINISHED_ALREADY": int(CancelFinishedAlready), "R_ASKED": int(CancelAsked),
	"R_FINISHED_HERE": int(CancelFinished), "R_DRAINING": int(CancelDraining),
	"E_FINISHED": jobspec.EventFinished, "E_FAILED": jobspec.EventFailed, "E_CANCELLED": jobspec.EventCancelled,
	"E_PAUSED":        jobspec.EventPaused,
	"N_OUTBOX_MAX":    OutboxMax,
	"R_ROUND_RUNNING": RoundRunning, "R_ROUND_FINISHED": RoundFinished, "R_ROUND_CANCEL": RoundCancel,
	"R_ROUND_PAUSED": RoundPaused,
}, Codes: codes}

// Fragments are the ledger's files that other packages' scripts end or
// open with, reading only the budget's constants (B_): lua/admit.lua,
// which a dupefilter check composes (Set.With) and runs as its tail,
// lua/kinds.lua, the per-kind counters a master's frontier scripts keep,
// and lua/budget.lua, the page budgets both count against. Each file's
// comment gives its layout of keys and arguments.
var Fragments = luascript.Set{FS: luaFiles, Consts: budgetConsts}

// budgetConsts are the names budget.lua reads: the state and budget
// hashes' fields, the budgets and their skipped counters.
var budgetConsts = luascript.Consts{
	"B_F_REACHED": cluster.StateBudgetReached, "B_PAGES": cluster.BudgetPages, "B_HOST_PREFIX": cluster.BudgetHostPrefix,
	"B_MAX_PAGES": jobspec.BudgetMaxPages, "B_MAX_PAGES_PER_HOST": jobspec.BudgetMaxPagesPerHost,
	"B_MAX_BYTES": jobspec.BudgetMaxBytes, "B_MAX_DURATION": jobspec.BudgetMaxDuration,
	"B_STAT_SKIPPED_MAX_PAGES": cluster.StatSkippedMaxPages, "B_STAT_SKIPPED_MAX_PAGES_PER_HOST": cluster.StatSkippedMaxPagesPerHost,
	"B_STAT_SKIPPED_MAX_BYTES": cluster.StatSkippedMaxBytes, "B_STAT_SKIPPED_MAX_DURATION": cluster.StatSkippedMaxDuration,
	"B_STAT_HOSTS_CLOSED": cluster.StatHostsClosed,
}

var (
	ackScript       = Steps.Load("lua/ack.lua")
	askCancelScript = Steps.Load("lua/unfenced.lua", "lua/kinds.lua", "lua/outbox.lua", "lua/cancel.lua")
	recordScript    = Steps.Load("lua/unfenced.lua", "lua/outbox.lua", "lua/record_event.lua")
	submitScript    = Steps.Load("lua/submit.lua")
	retryScript     = Steps.Load("lua/retry.lua")
	pauseScript     = Steps.Load("lua/unfenced.lua", "lua/outbox.lua", "lua/pause.lua")
	resumeScript    = Steps.Load("lua/resume.lua")
)

// The replies of a master's finish step (lua/finish.lua).
const (
	// RoundRunning: work is left, or the job is not running.
	RoundRunning = 0
	// RoundFinished: the round is finished.
	RoundFinished = 1
	// RoundCancel: client cancel asked to stop the job; its master
	// carries the cancel out.
	RoundCancel = 2
	// RoundPaused: client pause paused the job; its master stops the
	// round where it is until client resume.
	RoundPaused = 3
)
