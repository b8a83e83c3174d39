package loadgen

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/api/client"
)

// QueueStrategy is inventory.StrategyQueue; its audit waits for the queue to drain.
const QueueStrategy = "queue"

// Bounds of drainQueue: how long it waits for a queue product's stream to empty, and how
// often it asks the API (so at most timeout/interval + 1 audits).
const (
	queueDrainTimeout  = 30 * time.Second
	queueDrainInterval = 100 * time.Millisecond
)

// drainQueue waits until the API's audit of queue product id says nothing is queued any more
// (client.AwaitDrained), at most timeout, asking every interval: the consumers have written
// (or dead-lettered) every purchase answered 202, so that orders can be counted against the
// answers.
func drainQueue(ctx context.Context, c *client.Client, id int64, timeout, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := c.AwaitDrained(ctx, id, interval)
	return err
}
