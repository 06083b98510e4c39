package master

import (
	"context"
	"crypto/sha1"
	"net/url"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/queue"
)

// rerouteBatch is how many of a dead slave's tasks move per script call.
const rerouteBatch = 500

// rerouteDead moves the tasks queued or in flight on slaves that are not
// live onto live slaves, routed by the assigner over the current table.
func (r *jobRunner) rerouteDead(ctx context.Context, depth queue.Depth) {
	routes := r.m.liveRoutes()
	if routes == nil {
		return // nobody to move them to; they wait
	}
	for slave := range depth.Queued {
		if depth.Queued[slave]+depth.Inflight[slave] == 0 || routes.Live(slave) {
			continue
		}
		n, err := r.rerouteSlave(ctx, routes, slave)
		if err != nil {
			r.warn(ctx, "reroute tasks of dead slave", zap.Int("slave", slave), zap.Error(err))
			continue
		}
		r.log.Info("rerouted tasks of dead slave", zap.Int("slave", slave), zap.Int("tasks", n))
	}
}

// rerouteSlave moves every task of a dead slave, in batches.
func (r *jobRunner) rerouteSlave(ctx context.Context, routes *assign.Snapshot, dead int) (int, error) {
	queued, inflight, err := r.queues.Items(ctx, dead)
	if err != nil {
		return 0, err
	}
	tasks := append(inflight, queued...) // in-flight first: they were due earliest
	moved := 0
	woken := map[int]bool{}
	defer func() { r.m.wakeSlaves(ctx, r.name, woken) }()
	for start := 0; start < len(tasks); start += rerouteBatch {
		moves := r.routeAll(routes, tasks[start:min(start+rerouteBatch, len(tasks))])
		n, err := r.queues.MoveFromSlave(ctx, dead, moves)
		moved += n
		if err != nil {
			return moved, err
		}
		for to := range movedTo(moves) {
			woken[to] = true
		}
	}
	return moved, nil
}

// rebalance moves queued tasks whose slave the live slave table no longer
// routes them to, once per new table: a slave that joins, or rejoins after
// a partition (its tasks were re-routed while it was away), gets its fair
// share of the backlog, not only of what is discovered from then on. Tasks
// in flight stay with their holders.
func (r *jobRunner) rebalance(ctx context.Context, depth queue.Depth) {
	routes := r.m.liveRoutes()
	if routes == nil || routes == r.balanced {
		return
	}
	r.balanced = routes
	for slave, queued := range depth.Queued {
		if queued == 0 || !routes.Live(slave) {
			continue
		}
		n, err := r.rebalanceSlave(ctx, routes, slave)
		if err != nil {
			r.warn(ctx, "rebalance queued tasks", zap.Int("slave", slave), zap.Error(err))
			r.balanced = nil // try again next tick
			continue
		}
		if n > 0 {
			r.log.Info("rebalanced queued tasks", zap.Int("from", slave), zap.Int("tasks", n))
		}
	}
}

// rebalanceSlave moves the queued tasks of slave that now route elsewhere.
func (r *jobRunner) rebalanceSlave(ctx context.Context, routes *assign.Snapshot, slave int) (int, error) {
	queued, _, err := r.queues.Items(ctx, slave)
	if err != nil {
		return 0, err
	}
	moved := 0
	woken := map[int]bool{}
	defer func() { r.m.wakeSlaves(ctx, r.name, woken) }()
	for start := 0; start < len(queued); start += rerouteBatch {
		var moves []queue.Move
		for _, m := range r.routeAll(routes, queued[start:min(start+rerouteBatch, len(queued))]) {
			if m.To != slave {
				moves = append(moves, m)
			}
		}
		n, err := r.queues.MoveQueued(ctx, slave, moves)
		moved += n
		for to := range movedTo(moves) {
			woken[to] = true
		}
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// routeRetries routes the failed tasks client retry-failed re-enqueued.
func (r *jobRunner) routeRetries(ctx context.Context) {
	r.routeWaiting(ctx, r.keys.Retry(), r.queues.MoveFromRetry, "failed tasks for another try")
}

// routeWaiting routes a batch of the tasks waiting on list to be routed
// (the retry list, the render-wait list) over the live table, moving
// them with move; what names them in the log.
func (r *jobRunner) routeWaiting(ctx context.Context, list string, move func(context.Context, []queue.Move) (int, error), what string) {
	routes := r.m.liveRoutes()
	if routes == nil {
		return
	}
	tasks, err := r.m.deps.Redis.LRange(ctx, list, 0, rerouteBatch-1).Result()
	if err != nil || len(tasks) == 0 {
		if err != nil {
			r.warn(ctx, "read tasks waiting to be routed", zap.String("tasks", what), zap.Error(err))
		}
		return
	}
	moves := r.routeAll(routes, tasks)
	n, err := move(ctx, moves)
	if err != nil {
		r.warn(ctx, "route tasks", zap.String("tasks", what), zap.Error(err))
		return
	}
	r.m.wakeSlaves(ctx, r.name, movedTo(moves))
	r.log.Info("routed "+what, zap.Int("tasks", n))
}

// routeAll routes each task as the master first did (taskRouteKey). A
// task that cannot be decoded is routed by a hash of its bytes: the slave
// that takes it records it as failed, so it can neither stop the others
// from moving nor keep the job from finishing.
func (r *jobRunner) routeAll(routes *assign.Snapshot, tasks []string) []queue.Move {
	moves := make([]queue.Move, 0, len(tasks))
	for _, raw := range tasks {
		kind, key := r.taskRouteKey(raw)
		to, err := r.routeKind(routes, kind, key)
		if err != nil {
			continue // the snapshot has live slaves, so Route does not fail
		}
		moves = append(moves, queue.Move{Task: raw, To: to})
	}
	return moves
}

// taskRouteKey is the task's item kind and the key it is routed by: its
// host's when the job routes by host, else its fingerprint, else (a task
// that does not decode) a hash of its bytes.
func (r *jobRunner) taskRouteKey(raw string) (string, []byte) {
	if t, err := cluster.DecodeTask(raw); err == nil {
		if r.byHost {
			if key := hostRouteKey(t.URL); key != nil {
				return t.ItemKind(), key
			}
		} else if fp, err := canon.ParseFingerprint(t.FP); err == nil {
			return t.ItemKind(), fp[:]
		}
	}
	sum := sha1.Sum([]byte(raw))
	return "", sum[:]
}

// hostRouteKey is the key the pages of rawURL's host are routed by when a
// job routes by host (jobspec.RequestSpec.RoutesByHost): every page of a
// host goes to one slave, which alone draws on the host's budget beside
// the master, and a slave joining or leaving moves only its own share of
// the hosts. It is nil for a URL that does not parse.
func hostRouteKey(rawURL string) []byte {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	return []byte("host:" + politeness.HostOf(u)) // apart from any fingerprint
}
