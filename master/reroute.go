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

// rerouteScript moves tasks of a dead slave to live ones. KEYS[1] and
// KEYS[2] are the dead slave's queue and in-flight set; KEYS[3..] are
// target queues. ARGV holds task/target-index pairs. A task still in the
// dead slave's queue or in-flight set (it may have been acknowledged in the
// meantime) is appended to its target queue. Returns the number moved.
var rerouteScript = redis.NewScript(`
local moved = 0
for i = 1, #ARGV, 2 do
  local task = ARGV[i]
  local removed = redis.call('LREM', KEYS[1], 1, task)
  if removed == 0 then removed = redis.call('ZREM', KEYS[2], task) end
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
		n, err := r.rerouteBatch(ctx, routes, dead, tasks[start:min(start+rerouteBatch, len(tasks))])
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}

func (r *jobRunner) rerouteBatch(ctx context.Context, routes *assign.Snapshot, dead int, tasks []string) (int, error) {
	keys := []string{r.keys.Queue(dead), r.keys.Inflight(dead)}
	index := map[int]int{} // target slave -> KEYS index (1-based)
	args := make([]any, 0, 2*len(tasks))
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
		return 0, fmt.Errorf("reroute %d tasks of slave %d: %w", len(tasks), dead, err)
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
