package master

import (
	"context"

	"github.com/crawler-dev/crawler/queue"
)

// fullDepthEvery is how many reclaim ticks pass between two reads of every
// slave slot's queue (MaxSlaves of them, 64 by default). Between them only
// the live slaves' queues and those that held tasks at the last read are
// read: every task is routed to a live slave, so a queue outside both can
// gain tasks only from outside the cluster's protocol (a master of another
// version, a hand edit), and the full read finds those within this many
// ticks. A running job so reads a few queues a tick, not 128 keys.
const fullDepthEvery = 30

// readDepth reads the queue depths reclaim acts on: of every slave slot at
// a job's first tick and every fullDepthEvery, else of those that may hold
// tasks (see fullDepthEvery).
func (r *jobRunner) readDepth(ctx context.Context) (queue.Depth, error) {
	slaves := r.m.opts.MaxSlaves
	ids := r.depthIDs(slaves)
	d, err := r.queues.DepthOf(ctx, ids, slaves)
	if err != nil {
		return d, err
	}
	r.depthTicks++
	r.holding = r.holding[:0]
	for i := range slaves {
		if d.Queued[i]+d.Inflight[i] > 0 {
			r.holding = append(r.holding, i)
		}
	}
	return d, nil
}

// depthIDs are the slave slots to read this tick.
func (r *jobRunner) depthIDs(slaves int) []int {
	routes := r.m.liveRoutes()
	all := r.depthTicks%fullDepthEvery == 0
	ids := make([]int, 0, len(r.holding)+8)
	for i := range slaves {
		if all || (routes != nil && routes.Live(i)) {
			ids = append(ids, i)
		}
	}
	if all {
		return ids
	}
	for _, i := range r.holding {
		if routes == nil || !routes.Live(i) {
			ids = append(ids, i)
		}
	}
	return ids
}
