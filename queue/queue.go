package queue

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// Queue is one job's set of per-slave task queues.
type Queue struct {
	rdb  redis.UniversalClient
	keys cluster.JobKeys
}

// New returns the queues of the job whose keys are keys.
func New(rdb redis.UniversalClient, keys cluster.JobKeys) *Queue {
	return &Queue{rdb: rdb, keys: keys}
}

// SlaveQueue is one slave's queue of a job: a leased list whose outcomes are
// counted in the job's ledger when acknowledged.
type SlaveQueue struct {
	*Leased
	slave int
	keys  cluster.JobKeys
}

// Slave returns slave's queue.
func (q *Queue) Slave(slave int) *SlaveQueue {
	l := NewLeased(q.rdb, q.slaveKeys(slave))
	l.marks = true
	return &SlaveQueue{Leased: l, slave: slave, keys: q.keys}
}

func (q *Queue) slaveKeys(slave int) LeasedKeys {
	return LeasedKeys{List: q.keys.Queue(slave), Inflight: q.keys.Inflight(slave), Attempts: q.keys.TaskAttempts()}
}

// Park hands tasks still in flight on this slave to the job's render-wait
// list, uncounted as deliveries: the slave cannot render them (it has no
// browser, or its browser does not start), and the master routes them to
// a slave that can. It returns how many were parked.
func (s *SlaveQueue) Park(ctx context.Context, tasks []string) (int, error) {
	n, err := s.handBackTo(ctx, s.keys.RenderWait(), tasks, true)
	if err != nil {
		return 0, fmt.Errorf("park tasks for a renderer: %w", err)
	}
	return n, nil
}

// Steal moves queued tasks from the longest of the other slaves' queues
// (from) to the tail of this one, which has run dry: half of the victim's,
// at most most, from its tail, if it holds at least least. Nothing in
// flight moves, and no delivery is counted: a stolen task is taken like
// any other. It returns how many moved and from which slave (-1 if
// none). One round trip; a slave calls it only when its own queue is
// empty, so tasks stay where they were routed while their slave keeps up.
func (s *SlaveQueue) Steal(ctx context.Context, from []int, most, least int) (moved, victim int, err error) {
	keys := []string{s.keys.Queue(s.slave)}
	ids := []int{s.slave}
	for _, id := range from {
		if id != s.slave {
			keys, ids = append(keys, s.keys.Queue(id)), append(ids, id)
		}
	}
	if len(keys) == 1 {
		return 0, -1, nil
	}
	res, err := stealScript.Run(ctx, s.rdb, keys, most, least).Int64Slice()
	if err != nil {
		return 0, -1, fmt.Errorf("steal tasks for slave %d: %w", s.slave, err)
	}
	if len(res) != 2 || res[1] < 0 || res[1] > int64(len(ids)) {
		return 0, -1, fmt.Errorf("steal tasks for slave %d: unexpected reply %v", s.slave, res)
	}
	if res[0] == 0 {
		return 0, -1, nil
	}
	return int(res[0]), ids[res[1]-1], nil
}

// Depth is the number of tasks waiting and in flight for each slave, and
// of those waiting for a slave that can render.
type Depth struct {
	Queued   []int64
	Inflight []int64
	// RenderWait is the length of the job's render-wait list.
	RenderWait int64
}

// Total returns the tasks waiting and in flight over all slaves.
func (d Depth) Total() (queued, inflight int64) {
	for i := range d.Queued {
		queued += d.Queued[i]
		inflight += d.Inflight[i]
	}
	return queued, inflight
}

// Depth reads the queue depths of slaves 0..slaves-1 in one round trip.
func (q *Queue) Depth(ctx context.Context, slaves int) (Depth, error) {
	ids := make([]int, slaves)
	for i := range ids {
		ids[i] = i
	}
	return q.DepthOf(ctx, ids, slaves)
}

// DepthOf is Depth that reads only the slaves ids (each below slaves);
// the others read as empty.
func (q *Queue) DepthOf(ctx context.Context, ids []int, slaves int) (Depth, error) {
	pipe := q.rdb.Pipeline()
	ql := make([]*redis.IntCmd, len(ids))
	il := make([]*redis.IntCmd, len(ids))
	for k, i := range ids {
		ql[k] = pipe.LLen(ctx, q.keys.Queue(i))
		il[k] = pipe.ZCard(ctx, q.keys.Inflight(i))
	}
	wait := pipe.LLen(ctx, q.keys.RenderWait())
	if _, err := pipe.Exec(ctx); err != nil {
		return Depth{}, fmt.Errorf("read queue depths: %w", err)
	}
	d := Depth{Queued: make([]int64, slaves), Inflight: make([]int64, slaves), RenderWait: wait.Val()}
	for k, i := range ids {
		d.Queued[i], d.Inflight[i] = ql[k].Val(), il[k].Val()
	}
	return d, nil
}

// Items returns the wire form of every task waiting or in flight for slave.
func (q *Queue) Items(ctx context.Context, slave int) (queued, inflight []string, err error) {
	queued, err = q.rdb.LRange(ctx, q.keys.Queue(slave), 0, -1).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("list queue of slave %d: %w", slave, err)
	}
	inflight, err = q.rdb.ZRange(ctx, q.keys.Inflight(slave), 0, -1).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("list in-flight of slave %d: %w", slave, err)
	}
	return queued, inflight, nil
}

// Move is one task moving to another slave's queue.
type Move struct {
	// Task is the task's wire form.
	Task string
	// To is the slave whose queue it joins, or RenderWait.
	To int
}

// RenderWait is the Move target of a task of a rendered kind while no
// live slave can render: the job's render-wait list (JobKeys.RenderWait).
const RenderWait = -1

// target is the list a move to slave to joins.
func (q *Queue) target(to int) string {
	if to == RenderWait {
		return q.keys.RenderWait()
	}
	return q.keys.Queue(to)
}

// MoveFromSlave moves tasks of slave from (queued or in flight; a dead
// slave's) onto the queues of their new slaves, in one atomic step, and
// returns how many moved: a task acknowledged meanwhile stays where it is.
func (q *Queue) MoveFromSlave(ctx context.Context, from int, moves []Move) (int, error) {
	return q.move(ctx, q.keys.Queue(from), q.keys.Inflight(from), moves)
}

// MoveQueued moves tasks waiting on the queue of slave from (not those in
// flight) onto the queues of the slaves they now route to: a slave that
// joined gets its share of the backlog.
func (q *Queue) MoveQueued(ctx context.Context, from int, moves []Move) (int, error) {
	return q.move(ctx, q.keys.Queue(from), "", moves)
}

// MoveFromRetry moves tasks re-enqueued by client retry-failed from the
// job's retry list onto their slaves' queues.
func (q *Queue) MoveFromRetry(ctx context.Context, moves []Move) (int, error) {
	return q.move(ctx, q.keys.Retry(), "", moves)
}

// MoveFromRenderWait moves tasks waiting for a slave that can render onto
// the queues of the slaves they are now routed to.
func (q *Queue) MoveFromRenderWait(ctx context.Context, moves []Move) (int, error) {
	return q.move(ctx, q.keys.RenderWait(), "", moves)
}

func (q *Queue) move(ctx context.Context, list, inflight string, moves []Move) (int, error) {
	if len(moves) == 0 {
		return 0, nil
	}
	useInflight := "1"
	if inflight == "" {
		inflight, useInflight = list, "0"
	}
	keys := []string{list, inflight, q.keys.TaskAttempts()}
	index := map[int]int{} // target slave -> KEYS index (1-based)
	args := make([]any, 0, 1+2*len(moves))
	args = append(args, useInflight)
	for _, m := range moves {
		i, ok := index[m.To]
		if !ok {
			keys = append(keys, q.target(m.To))
			i = len(keys)
			index[m.To] = i
		}
		args = append(args, m.Task, i)
	}
	n, err := moveScript.Run(ctx, q.rdb, keys, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("move %d tasks from %s: %w", len(moves), list, err)
	}
	return n, nil
}
