package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/internal/luascript"
)

// The errors of a pause or resume that changed nothing, by the state the
// job is in.
var (
	// ErrNoJob: no job of that name was ever submitted.
	ErrNoJob = errors.New("no such job")
	// ErrCancelling: client cancel asked to stop the job and its master
	// has not finished it yet; it is neither paused nor resumed.
	ErrCancelling = errors.New("the job is being cancelled")
	// ErrPaused: the job is paused already.
	ErrPaused = errors.New("the job is paused already")
	// ErrNotPaused: resume of a job that is not paused.
	ErrNotPaused = errors.New("the job is not paused")
	// ErrFinished: the job is finished and runs no more rounds.
	ErrFinished = errors.New("the job is finished")
)

// codes translates the steps' error replies into the sentinels above.
var codes = luascript.Codes{"NOJOB": ErrNoJob, "CANCELLING": ErrCancelling, "PAUSED": ErrPaused,
	"NOTPAUSED": ErrNotPaused, "FINISHED": ErrFinished}

// Pause pauses the job at now (lua/pause.lua): a pending or running job,
// or a recurring one between rounds, is paused where it is; its queues,
// leases and counters do not change. It returns the state it was paused
// in, which Resume restores.
func (l *Ledger) Pause(ctx context.Context, now time.Time) (from string, err error) {
	from, err = pauseScript.Run(ctx, l.rdb, append([]string{l.keys.State()}, OutboxKeys(l.keys)...), stamp(now)).Text()
	if err != nil {
		return "", fmt.Errorf("pause: %w", codes.Translate(err))
	}
	return from, nil
}

// Resume ends a pause (lua/resume.lua) and returns the state restored: a
// job paused while running runs on from where it stopped. A job client
// cancel asked to stop is not resumed (ErrCancelling).
func (l *Ledger) Resume(ctx context.Context) (state string, err error) {
	state, err = resumeScript.Run(ctx, l.rdb, []string{l.keys.State()}).Text()
	if err != nil {
		return "", fmt.Errorf("resume: %w", codes.Translate(err))
	}
	return state, nil
}
