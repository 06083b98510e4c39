package slave

import (
	"context"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/queue"
)

// take takes up to n tasks of j's queue. When the queue has run dry after
// a take that got tasks and the slave is running out of work (it holds
// fewer tasks than it fetches at once), it first steals from the job's
// longest queue (steal) and takes from what it stole: the slaves of a
// one-site crawl, whose pages stall unevenly, then finish together, each
// using its share of the site's slots to the end, instead of one working
// through its backlog on its own share while the others wait with theirs.
// A slave that still holds work (a polite crawl's tasks waiting for their
// hosts' turns) does not steal: it has more than it can fetch now.
func (s *Slave) take(ctx context.Context, j *job, n int) ([]queue.Delivery, error) {
	ds, err := j.queue.Take(ctx, n, s.opts.TaskLease)
	if err != nil || len(ds) > 0 {
		j.stealArmed = err == nil
		return ds, err
	}
	if !j.stealArmed || s.pending() >= s.opts.Concurrency {
		return nil, nil
	}
	j.stealArmed = false // one try a dry spell: an idle job costs no steals
	if s.steal(ctx, j, n) == 0 {
		return nil, nil
	}
	ds, err = j.queue.Take(ctx, n, s.opts.TaskLease)
	j.stealArmed = err == nil && len(ds) > 0
	return ds, err
}

// mayStealSoon reports whether j's queue ran dry after a take that got
// tasks and j may steal, but the slave held too much work to try yet: it
// tries once a fetch ends and frees room (dispatch waits for that, not
// for word of new tasks).
func (s *Slave) mayStealSoon(j *job) bool {
	return j.stealArmed && s.canSteal(j)
}

// canSteal reports whether j's tasks may move between slaves at all.
func (s *Slave) canSteal(j *job) bool {
	return len(j.renderKinds) == 0 && !j.spec.RoutesByHost()
}

// steal moves up to n queued tasks of j from the longest queue of the
// other live slaves to this slave's own, if that queue holds more than a
// slave holds for its fetchers (a shorter one is about to be worked off
// by its own slave). Only queued tasks move, never ones in flight; a job
// with rendered kinds is left alone (its tasks go only to slaves that
// render), and so is a job routed by host (each host's pages stay with
// one slave, whose pace the host's budget sets, not the slave's). It
// returns how many moved.
func (s *Slave) steal(ctx context.Context, j *job, n int) int {
	if !s.canSteal(j) {
		return 0
	}
	table, err := s.registry.Snapshot(ctx)
	if err != nil {
		s.log.Debug("read the live slaves to steal from", zap.String("job", j.name), zap.Error(err))
		return 0
	}
	ids := make([]int, len(table.Nodes))
	for i, node := range table.Nodes {
		ids[i] = node.ID
	}
	moved, victim, err := j.queue.Steal(ctx, ids, n, s.capacity())
	if err != nil {
		s.log.Warn("steal tasks", zap.String("job", j.name), zap.Error(err))
		return 0
	}
	if moved > 0 {
		s.deps.Metrics.Node(metrics.RoleSlave, s.opts.ID).Stole(moved)
		s.log.Debug("stole tasks", zap.String("job", j.name), zap.Int("tasks", moved), zap.Int("from", victim))
	}
	return moved
}
