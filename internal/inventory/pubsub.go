package inventory

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// announce publishes product id on channel, for every process's listenIDs: best effort, within
// a second, whatever becomes of ctx meanwhile.
func announce(ctx context.Context, rdb redis.UniversalClient, channel string, id int64) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	return rdb.Publish(ctx, channel, id).Err()
}

// listenIDs calls fn with each product id published on channel until ctx ends.
func listenIDs(ctx context.Context, rdb redis.UniversalClient, channel string, fn func(id int64)) {
	listen(ctx, rdb, channel, func(payload string) {
		if id, err := strconv.ParseInt(payload, 10, 64); err == nil {
			fn(id)
		}
	})
}

// listen calls fn with each payload published on channel until ctx ends; the subscription
// reconnects by itself after a network error.
func listen(ctx context.Context, rdb redis.UniversalClient, channel string, fn func(payload string)) {
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
			fn(msg.Payload)
		}
	}
}
