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
	// bands are the priorities of the job's tasks, highest first, when
	// they are not all 0 (see WithBands); nil keeps one list per slave.
	bands []int
}

// New returns the queues of the job whose keys are keys.
func New(rdb redis.UniversalClient, keys cluster.JobKeys) *Queue {
	return &Queue{rdb: rdb, keys: keys}
}

// WithBands keeps each slave's queue in bands, one list per priority of
// priorities (jobspec.Job.ItemPriorities: 0 among them, highest first),
// when there is more than one; it returns q. A task waits in the band of
// its own priority (cluster.Task.Priority, cluster.JobKeys.Band); a
// slave takes from the band of the highest effective priority first.
func (q *Queue) WithBands(priorities []int) *Queue {
	q.bands = nil
	if len(priorities) > 1 {
		q.bands = priorities
	}
	return q
}

// priorities are the bands' priorities: [0] for a queue not kept in
// bands.
func (q *Queue) priorities() []int {
	if q.bands == nil {
		return []int{0}
	}
	return q.bands
}

// lists are slave's lists of queued tasks, one per band.
func (q *Queue) lists(slave int) []string {
	out := make([]string, 0, len(q.priorities()))
	for _, p := range q.priorities() {
		out = append(out, q.keys.Band(slave, p))
	}
	return out
}

// SlaveQueue is one slave's queue of a job: a leased list whose outcomes are
// counted in the job's ledger when acknowledged.
type SlaveQueue struct {
	*Leased
	slave int
	keys  cluster.JobKeys
	bands []int // the priorities of its bands, highest first: [0] for none
}

// Slave returns slave's queue.
func (q *Queue) Slave(slave int) *SlaveQueue {
	l := NewLeased(q.rdb, q.slaveKeys(slave))
	l.marks = true
	return &SlaveQueue{Leased: l, slave: slave, keys: q.keys, bands: q.priorities()}
}

func (q *Queue) slaveKeys(slave int) LeasedKeys {
	k := LeasedKeys{List: q.keys.Queue(slave), Inflight: q.keys.Inflight(slave), Attempts: q.keys.TaskAttempts()}
	for _, p := range q.bands {
		k.Bands = append(k.Bands, Band{Priority: p, List: q.keys.Band(slave, p)})
	}
	if q.bands != nil {
		k.Served = q.keys.Served(slave)
	}
	return k
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
// A queue kept in bands steals band by band, the highest first, from the
// first band a victim holds enough of (one round trip a band tried).
func (s *SlaveQueue) Steal(ctx context.Context, from []int, most, least int) (moved, victim int, err error) {
	for _, p := range s.bands {
		moved, victim, err = s.stealBand(ctx, p, from, most, least)
		if err != nil || moved > 0 {
			return moved, victim, err
		}
	}
	return 0, -1, nil
}

// stealBand is Steal from the band of priority p.
func (s *SlaveQueue) stealBand(ctx context.Context, p int, from []int, most, least int) (moved, victim int, err error) {
	keys := []string{s.keys.Band(s.slave, p)}
	ids := []int{s.slave}
	for _, id := range from {
		if id != s.slave {
			keys, ids = append(keys, s.keys.Band(id, p)), append(ids, id)
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
	pipe := q.rdb.TxPipeline() // one MULTI: a take between two reads would count its tasks twice
	ql := make([][]*redis.IntCmd, len(ids))
	il := make([]*redis.IntCmd, len(ids))
	for k, i := range ids {
		for _, list := range q.lists(i) {
			ql[k] = append(ql[k], pipe.LLen(ctx, list))
		}
		il[k] = pipe.ZCard(ctx, q.keys.Inflight(i))
	}
	wait := pipe.LLen(ctx, q.keys.RenderWait())
	if _, err := pipe.Exec(ctx); err != nil {
		return Depth{}, fmt.Errorf("read queue depths: %w", err)
	}
	d := Depth{Queued: make([]int64, slaves), Inflight: make([]int64, slaves), RenderWait: wait.Val()}
	for k, i := range ids {
		for _, c := range ql[k] {
			d.Queued[i] += c.Val()
		}
		d.Inflight[i] = il[k].Val()
	}
	return d, nil
}

// Items returns the wire form of every task waiting (band by band, the
// highest first) or in flight for slave.
func (q *Queue) Items(ctx context.Context, slave int) (queued, inflight []string, err error) {
	for _, list := range q.lists(slave) {
		band, err := q.rdb.LRange(ctx, list, 0, -1).Result()
		if err != nil {
			return nil, nil, fmt.Errorf("list queue of slave %d: %w", slave, err)
		}
		queued = append(queued, band...)
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

// target is the list task joins on a move to slave to: the band of its
// priority there.
func (q *Queue) target(to int, task string) string {
	if to == RenderWait {
		return q.keys.RenderWait()
	}
	return q.keys.Band(to, q.priorityOf(task))
}

// priorityOf is the band of task: its priority, or 0 in a queue not
// kept in bands (or for a task that does not decode: it moves as one of
// priority 0 would).
func (q *Queue) priorityOf(task string) int {
	if q.bands == nil {
		return 0
	}
	t, err := cluster.DecodeTask(task)
	if err != nil {
		return 0
	}
	return t.Priority
}

// MoveFromSlave moves tasks of slave from (queued or in flight; a dead
// slave's) onto the queues of their new slaves, in one atomic step, and
// returns how many moved: a task acknowledged meanwhile stays where it is.
func (q *Queue) MoveFromSlave(ctx context.Context, from int, moves []Move) (int, error) {
	return q.move(ctx, from, "", q.keys.Inflight(from), moves)
}

// MoveQueued moves tasks waiting on the queue of slave from (not those in
// flight) onto the queues of the slaves they now route to: a slave that
// joined gets its share of the backlog.
func (q *Queue) MoveQueued(ctx context.Context, from int, moves []Move) (int, error) {
	return q.move(ctx, from, "", "", moves)
}

// MoveFromRetry moves tasks re-enqueued by client retry-failed from the
// job's retry list onto their slaves' queues.
func (q *Queue) MoveFromRetry(ctx context.Context, moves []Move) (int, error) {
	return q.move(ctx, 0, q.keys.Retry(), "", moves)
}

// MoveFromRenderWait moves tasks waiting for a slave that can render onto
// the queues of the slaves they are now routed to.
func (q *Queue) MoveFromRenderWait(ctx context.Context, moves []Move) (int, error) {
	return q.move(ctx, 0, q.keys.RenderWait(), "", moves)
}

// move moves tasks from list (or, when list is "", from their bands on
// slave from's queue), and from in-flight set inflight when it is set.
func (q *Queue) move(ctx context.Context, from int, list, inflight string, moves []Move) (int, error) {
	if len(moves) == 0 {
		return 0, nil
	}
	useInflight := "1"
	if inflight == "" {
		inflight, useInflight = q.keys.Inflight(from), "0"
	}
	keys := []string{inflight, q.keys.TaskAttempts()}
	index := map[string]int{} // list -> KEYS index (1-based)
	at := func(key string) int {
		i, ok := index[key]
		if !ok {
			keys = append(keys, key)
			i = len(keys)
			index[key] = i
		}
		return i
	}
	args := make([]any, 0, 1+3*len(moves))
	args = append(args, useInflight)
	for _, m := range moves {
		src := list
		if src == "" {
			src = q.keys.Band(from, q.priorityOf(m.Task))
		}
		args = append(args, m.Task, at(src), at(q.target(m.To, m.Task)))
	}
	n, err := moveScript.Run(ctx, q.rdb, keys, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("move %d tasks of %s: %w", len(moves), q.keys.Tag(), err)
	}
	return n, nil
}
