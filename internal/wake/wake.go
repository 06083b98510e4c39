package wake

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Listen subscribes to channel and calls on with each message's payload,
// in order, until ctx ends or the subscription is closed. on runs on
// Listen's goroutine and should not block.
func Listen(ctx context.Context, rdb redis.UniversalClient, channel string, on func(payload string)) {
	sub := rdb.Subscribe(ctx, channel)
	defer sub.Close()
	ch := sub.Channel()
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
