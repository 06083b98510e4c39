package master

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// JobStateChange is a job's move from one state to another (cluster's
// job states: pending, running, paused, finished), as the master that
// runs it saw it.
type JobStateChange struct {
	Job  string
	From string
	To   string
	// Round is the job's round when the change was seen.
	Round int64
	// Cancelled is true when client cancel finished the job.
	Cancelled bool
	// At is when the master saw it.
	At time.Time
}

// stateChanged is the one place a master says that a job it runs changed
// state: paused (client pause), running again (client resume, or a
// round started), finished (a round ended, or a cancel did). It records
// the state in the metrics, logs the change and hands it to
// Deps.OnJobState (the hook a webhook sender plugs into). The first state
// a master sees of a job is not a change: a master taking a job over from
// another says nothing the other said already.
func (r *jobRunner) stateChanged(s jobState) {
	r.m.deps.Metrics.JobStates().Set(r.name, s.state)
	from := r.m.sawState(r.name, s.state)
	if from == "" || from == s.state {
		return
	}
	c := JobStateChange{Job: r.name, From: from, To: s.state, Round: s.round, Cancelled: s.cancelled, At: time.Now().UTC()}
	r.log.Info("job state changed", zap.String("from", from), zap.String("to", s.state), zap.Int64("round", s.round))
	if r.m.deps.OnJobState != nil {
		r.m.deps.OnJobState(c)
	}
}

// sawState records that job is in state and returns the state this
// master saw it in before ("" for none).
func (m *Master) sawState(job, state string) (from string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from, m.seen[job] = m.seen[job], state
	return from
}

// errPaused stops a round that client pause paused.
var errPaused = errors.New("job paused")

// pause stops the round where it is, as client pause asked: nothing of
// the job is taken any more (list pages, found links), list pages not yet
// sent are handed back uncounted, and those on the wire finish and are
// committed, up to cancelDrain. Then it returns errPaused, which ends the
// round; the runner waits for client resume. The slaves stop taking the
// job's tasks on their own (it is no longer running).
func (r *jobRunner) pause(ctx context.Context) error {
	r.pausing.Store(true)
	r.stopTaking()
	drainBy := time.Now().Add(cancelDrain)
	for r.inProgressCount()+r.foundHeldCount() > 0 && time.Now().Before(drainBy) {
		if !sleep(ctx, finishCheckEvery) {
			return nil
		}
	}
	r.log.Info("job paused", zap.Int("list_pages_left_in_progress", r.inProgressCount()))
	return errPaused
}

// foundHeldCount is how many Found entries this runner's drain routes.
func (r *jobRunner) foundHeldCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.foundHeld)
}

// handBackPaused hands a list page not sent because the job was paused
// back to the frontier, its delivery uncounted: the pause is not the
// page's fault.
func (r *jobRunner) handBackPaused(ctx context.Context, entry string) {
	if _, err := r.lists.Release(ctx, []string{entry}); err != nil {
		r.warn(ctx, "hand back a list page of a paused job; the next sweep puts it back", zap.Error(err))
	}
}
