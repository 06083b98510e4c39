package wake

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// HealthCheck is how long a quiet subscription waits before it pings Redis
// to find out whether its connection still holds (go-redis pings after 3 s:
// a third of an idle cluster's commands). A wake is a shortcut, so a
// connection that died quietly costs at most this long of polls.
const HealthCheck = 30 * time.Second

// Listen subscribes to channel and calls on with each message's payload,
// in order, until ctx ends or the subscription is closed. on runs on
// Listen's goroutine and should not block.
func Listen(ctx context.Context, rdb redis.UniversalClient, channel string, on func(payload string)) {
	sub := rdb.Subscribe(ctx, channel)
	defer sub.Close()
	ch := sub.Channel(redis.WithChannelHealthCheckInterval(HealthCheck))
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			on(msg.Payload)
		}
	}
}
