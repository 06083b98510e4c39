package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
)

// Notifier sends the events of every job's outbox to the job's webhooks.
// Every master runs one; the events' leases share them out.
type Notifier struct {
	opts   Options
	deps   Deps
	log    *zap.Logger
	sender *Sender
	// work holds the events taken and not yet sent: Workers of them at
	// most, so an event never waits here longer than one send.
	work chan taken
	// freed wakes the scanning loop when a worker is done with an event,
	// so that it takes the next one at once (buffered, 1).
	freed chan struct{}

	lastScan time.Time // when the outboxes were last looked at
	version  string    // the jobs' version seen then
	// pending are the outboxes the last look left events in, for lack of
	// room: they are taken from as room frees, before the next look.
	pending []*outbox
}

// taken is an event taken from a job's outbox.
type taken struct {
	box *outbox
	d   queue.Delivery
}

// New validates opts and returns a Notifier ready to Run.
func New(opts Options, deps Deps) (*Notifier, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	if err := deps.validate(); err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Notifier{opts: opts, deps: deps, log: log.Named("notify"), sender: NewSender(opts, deps.Secret),
		work: make(chan taken, opts.Workers), freed: make(chan struct{}, 1)}, nil
}

// Run sends events until ctx ends; the events it holds then go back to
// their outboxes for another master (or this one, restarted).
func (n *Notifier) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range n.opts.Workers {
		wg.Go(func() { n.sendEach(ctx) })
	}
	ticker := time.NewTicker(n.opts.Tick)
	defer ticker.Stop()
	for ctx.Err() == nil {
		if n.scanDue(ctx) {
			n.scan(ctx)
		}
		select {
		case <-ctx.Done():
		case <-ticker.C:
		case <-n.freed:
			n.takePending(ctx)
		}
	}
	wg.Wait()
	for {
		select {
		case t := <-n.work:
			n.release(t)
		default:
			return nil
		}
	}
}

// scanDue reports whether the outboxes must be looked at: when the jobs'
// version changed (a round finished, a job was cancelled) and every
// Options.Scan.
func (n *Notifier) scanDue(ctx context.Context) bool {
	v, err := n.deps.Redis.Get(ctx, n.deps.Keys.JobsVersion()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false
	}
	if v == n.version && time.Since(n.lastScan) < n.opts.Scan {
		return false
	}
	n.version, n.lastScan = v, time.Now()
	return true
}

// scan reads every job's outbox and in-flight events in one round trip,
// puts back the events whose sender's lease lapsed, and takes as many
// events as there is room for.
func (n *Notifier) scan(ctx context.Context) {
	names, err := n.deps.Redis.ZRange(ctx, n.deps.Keys.Jobs(), 0, -1).Result()
	if err != nil {
		n.warn(ctx, "list jobs", zap.Error(err))
		return
	}
	pipe := n.deps.Redis.Pipeline()
	waiting, active := make([]*redis.IntCmd, len(names)), make([]*redis.IntCmd, len(names))
	for i, name := range names {
		jk := n.deps.Keys.Job(name)
		waiting[i], active[i] = pipe.LLen(ctx, jk.Outbox()), pipe.ZCard(ctx, jk.OutboxActive())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		n.warn(ctx, "read outboxes", zap.Error(err))
		return
	}
	n.pending = n.pending[:0]
	for i, name := range names {
		if waiting[i].Val() == 0 && active[i].Val() == 0 {
			continue
		}
		box := newOutbox(n.deps.Redis, n.deps.Keys, name)
		if active[i].Val() > 0 {
			n.reclaim(ctx, box)
		}
		n.pending = append(n.pending, box)
	}
	n.takePending(ctx)
}

// takePending takes events from the pending outboxes while there is room,
// forgetting those it emptied.
func (n *Notifier) takePending(ctx context.Context) {
	for len(n.pending) > 0 {
		room := cap(n.work) - len(n.work)
		if room == 0 {
			return
		}
		if n.takeFrom(ctx, n.pending[0], room) {
			return
		}
		n.pending = n.pending[1:]
	}
}

// reclaim puts back box's events whose sender's lease lapsed.
func (n *Notifier) reclaim(ctx context.Context, box *outbox) {
	if moved, err := box.events.Reclaim(ctx); err != nil {
		n.warn(ctx, "reclaim events", zap.String("job", box.job), zap.Error(err))
	} else if moved > 0 {
		n.log.Info("events taken over after their sender's lease", zap.String("job", box.job), zap.Int("events", moved))
	}
}

// takeFrom takes up to room events from box and reports whether it may
// hold more (it gave room).
func (n *Notifier) takeFrom(ctx context.Context, box *outbox, room int) bool {
	ds, err := box.events.Take(ctx, room, n.opts.Lease)
	if err != nil {
		n.warn(ctx, "take events", zap.String("job", box.job), zap.Error(err))
		return false
	}
	for _, d := range ds {
		n.work <- taken{box: box, d: d} // only Run's loop sends, and took no more than the room
	}
	return len(ds) == room
}

// sendEach sends the events taken until ctx ends.
func (n *Notifier) sendEach(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-n.work:
			n.deliver(ctx, t)
			select {
			case n.freed <- struct{}{}:
			default:
			}
		}
	}
}

// deliver sends one event to each of its job's webhooks that asks for
// it and has not had it yet, all at once, then takes it off the outbox.
// An event cut short by ctx goes back.
func (n *Notifier) deliver(ctx context.Context, t taken) {
	log := n.log.With(zap.String("job", t.box.job))
	rec, err := DecodeOutbox(t.d.Entry)
	if err != nil {
		log.Error("unreadable outbox event dropped", zap.Error(err))
		n.finish(ctx, t, 0, nil)
		return
	}
	spec, err := t.box.spec(ctx)
	if err != nil {
		n.warn(ctx, "read job spec", zap.String("job", t.box.job), zap.Error(err))
		n.release(t)
		return
	}
	if spec == nil { // the job was reset: nobody to tell
		n.finish(ctx, t, rec.ID, nil)
		return
	}
	ev := NewEvent(t.box.job, rec)
	if t.d.Count > n.opts.MaxDeliveries {
		n.giveUp(ctx, t.box, spec.Notify, ev, fmt.Sprintf("its senders stopped %d times before it was sent", t.d.Count-1))
		n.finish(ctx, t, rec.ID, spec.Notify)
		return
	}
	body, err := json.Marshal(ev)
	if err != nil {
		log.Error("encode event", zap.Error(err))
		n.release(t)
		return
	}
	var wg sync.WaitGroup
	for _, hook := range spec.Notify {
		if hook.Wants(ev.Event) {
			wg.Go(func() { n.sendOne(ctx, t.box, hook, rec.ID, ev, body) })
		}
	}
	wg.Wait()
	if ctx.Err() != nil {
		n.release(t)
		return
	}
	n.finish(ctx, t, rec.ID, spec.Notify)
}

// sendOne sends ev to hook unless it had it already, and marks it sent,
// or records why it could not be.
func (n *Notifier) sendOne(ctx context.Context, box *outbox, hook jobspec.Webhook, id int64, ev Event, body []byte) {
	log := n.log.With(zap.String("job", box.job), zap.String("webhook", displayURL(hook.URL)),
		zap.String("event", ev.Event), zap.String("id", ev.ID))
	if done, err := box.sent(ctx, id, hook.URL); err != nil || done {
		if err != nil {
			n.warn(ctx, "read sent mark", zap.Error(err))
		}
		return // on an error, the event goes back with the others: a redelivery checks again
	}
	tries, err := n.sender.Send(ctx, hook.URL, ev, body)
	switch {
	case err == nil:
		log.Info("webhook sent", zap.Int("tries", tries))
		if err := box.markSent(ctx, id, hook.URL); err != nil {
			n.warn(ctx, "mark webhook sent", zap.Error(err))
		}
	case ctx.Err() != nil:
	default:
		why := fmt.Sprintf("not delivered after %d tries: %v", tries, err)
		log.Warn("webhook failed", zap.Int("tries", tries), zap.Error(err))
		n.giveUp(ctx, box, []jobspec.Webhook{hook}, ev, why)
	}
}

// giveUp records, for each of hooks that asks for ev, that it was not
// sent it and why, among the job's warnings.
func (n *Notifier) giveUp(ctx context.Context, box *outbox, hooks []jobspec.Webhook, ev Event, why string) {
	for _, h := range hooks {
		if !h.Wants(ev.Event) {
			continue
		}
		msg := fmt.Sprintf("webhook %s: the %s event of round %d (%s) %s", displayURL(h.URL), ev.Event, ev.Round, ev.At, why)
		if err := box.warn(ctx, h.URL, msg); err != nil {
			n.warn(ctx, "record webhook warning", zap.Error(err))
		}
	}
}

// finish takes t off its outbox for good.
func (n *Notifier) finish(ctx context.Context, t taken, id int64, hooks []jobspec.Webhook) {
	if err := t.box.done(ctx, t.d.Entry, id, hooks); err != nil {
		n.warn(ctx, "finish event", zap.Error(err))
	}
}

// release hands t back to its outbox, not counted, for whoever scans it
// next. It runs as the notifier stops, so on a context of its own.
func (n *Notifier) release(t taken) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := t.box.events.Release(ctx, []string{t.d.Entry}); err != nil {
		n.log.Warn("hand event back", zap.String("job", t.box.job), zap.Error(err))
	}
}

// warn logs a warning unless ctx ended.
func (n *Notifier) warn(ctx context.Context, msg string, fields ...zap.Field) {
	if ctx.Err() == nil {
		n.log.Warn(msg, fields...)
	}
}

// displayURL is a webhook's URL as logs and warnings show it: scheme and
// host, the path cut, as it may hold the receiver's token.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unreadable URL)"
	}
	shown := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		shown += "/…"
	}
	return shown
}
