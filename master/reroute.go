package master

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/queue"
)

// rerouteBatch is how many of a dead slave's tasks move per script call.
const rerouteBatch = 500

// rerouteScript moves tasks to the slave queues they are routed to: a dead
// slave's, or those re-enqueued by retry-failed. KEYS[1] is the source
// list; KEYS[2] the source in-flight set, looked at when ARGV[1] is "1";
// KEYS[3..] are target queues. ARGV[2..] holds task/target-index pairs. A
// task still in the source (it may have been acknowledged meanwhile) is
// appended to its target queue. Returns the number moved.
var rerouteScript = redis.NewScript(`
local moved = 0
for i = 2, #ARGV, 2 do
  local task = ARGV[i]
  local removed = redis.call('LREM', KEYS[1], 1, task)
  if removed == 0 and ARGV[1] == '1' then removed = redis.call('ZREM', KEYS[2], task) end
  if removed > 0 then
    redis.call('RPUSH', KEYS[tonumber(ARGV[i + 1])], task)
    moved = moved + 1
  end
end
return moved
`)

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
			r.log.Warn("reroute tasks of dead slave", zap.Int("slave", slave), zap.Error(err))
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
	for start := 0; start < len(tasks); start += rerouteBatch {
		n, err := r.moveTasks(ctx, routes, r.keys.Queue(dead), r.keys.Inflight(dead), tasks[start:min(start+rerouteBatch, len(tasks))])
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// routeRetries routes the failed tasks client retry-failed re-enqueued.
func (r *jobRunner) routeRetries(ctx context.Context) {
	routes := r.m.liveRoutes()
	if routes == nil {
		return
	}
	tasks, err := r.m.deps.Redis.LRange(ctx, r.keys.Retry(), 0, rerouteBatch-1).Result()
	if err != nil || len(tasks) == 0 {
		if err != nil {
			r.log.Warn("read retried tasks", zap.Error(err))
		}
		return
	}
	n, err := r.moveTasks(ctx, routes, r.keys.Retry(), "", tasks)
	if err != nil {
		r.log.Warn("route retried tasks", zap.Error(err))
		return
	}
	r.log.Info("routed failed tasks for another try", zap.Int("tasks", n))
}

// moveTasks moves tasks from the source list (and in-flight set, unless
// "") onto the queues the routes give them.
func (r *jobRunner) moveTasks(ctx context.Context, routes *assign.Snapshot, list, inflight string, tasks []string) (int, error) {
	useInflight := "1"
	if inflight == "" {
		inflight, useInflight = list, "0"
	}
	keys := []string{list, inflight}
	index := map[int]int{} // target slave -> KEYS index (1-based)
	args := make([]any, 0, 1+2*len(tasks))
	args = append(args, useInflight)
	for _, raw := range tasks {
		target, err := routeTask(routes, raw)
		if err != nil {
			return 0, err
		}
		i, ok := index[target]
		if !ok {
			keys = append(keys, r.keys.Queue(target))
			i = len(keys)
			index[target] = i
		}
		args = append(args, raw, i)
	}
	n, err := rerouteScript.Run(ctx, r.m.deps.Redis, keys, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("move %d tasks from %s: %w", len(tasks), list, err)
	}
	return n, nil
}

// routeTask routes a task by its fingerprint, as the master first did.
func routeTask(routes *assign.Snapshot, raw string) (int, error) {
	t, err := cluster.DecodeTask(raw)
	if err != nil {
		return 0, err
	}
	fp, err := dedup.ParseFingerprint(t.FP)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", t.URL, err)
	}
	return routes.Route(fp[:])
}
