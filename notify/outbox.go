package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
)

// outbox is one job's outbox: its events as a leased list, the marks of
// the webhooks each was delivered to, and the job's webhook warnings.
type outbox struct {
	rdb    redis.UniversalClient
	job    string
	keys   cluster.JobKeys
	events *queue.Leased
}

func newOutbox(rdb redis.UniversalClient, keys cluster.Keys, job string) *outbox {
	jk := keys.Job(job)
	return &outbox{rdb: rdb, job: job, keys: jk, events: queue.NewLeased(rdb, queue.LeasedKeys{
		List: jk.Outbox(), Inflight: jk.OutboxActive(), Attempts: jk.OutboxAttempts()})}
}

// sentMark is the NotifySent field of event id's delivery to target.
func sentMark(id int64, target string) string { return strconv.FormatInt(id, 10) + " " + target }

// sent reports whether event id was delivered to target already.
func (o *outbox) sent(ctx context.Context, id int64, target string) (bool, error) {
	ok, err := o.rdb.HExists(ctx, o.keys.NotifySent(), sentMark(id, target)).Result()
	if err != nil {
		return false, fmt.Errorf("job %s: read sent mark: %w", o.job, err)
	}
	return ok, nil
}

// markSent records that event id was delivered to target.
func (o *outbox) markSent(ctx context.Context, id int64, target string) error {
	if err := o.rdb.HSet(ctx, o.keys.NotifySent(), sentMark(id, target), 1).Err(); err != nil {
		return fmt.Errorf("job %s: mark sent: %w", o.job, err)
	}
	return nil
}

// done takes entry, event id, out of the outbox for good, with its
// delivery count and sent marks, in one transaction.
func (o *outbox) done(ctx context.Context, entry string, id int64, hooks []jobspec.Webhook) error {
	_, err := o.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, o.keys.OutboxActive(), entry)
		p.HDel(ctx, o.keys.OutboxAttempts(), queue.AttemptFields(entry)...)
		for _, h := range hooks {
			p.HDel(ctx, o.keys.NotifySent(), sentMark(id, h.URL))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("job %s: take event %d off the outbox: %w", o.job, id, err)
	}
	return nil
}

// warn records why target could not be sent an event, for client status.
func (o *outbox) warn(ctx context.Context, target, why string) error {
	if err := o.rdb.HSet(ctx, o.keys.NotifyWarnings(), target, why).Err(); err != nil {
		return fmt.Errorf("job %s: record webhook warning: %w", o.job, err)
	}
	return nil
}

// spec reads the job's spec, or nil when the job is gone (reset).
func (o *outbox) spec(ctx context.Context) (*jobspec.Job, error) {
	raw, err := o.rdb.Get(ctx, o.keys.Spec()).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: read spec: %w", o.job, err)
	}
	return jobspec.Decode(raw)
}
