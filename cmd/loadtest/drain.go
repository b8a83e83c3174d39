package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/api/client"
)

// queueStrategy is inventory.StrategyQueue: purchases admitted in Redis and written by the
// API's consumers in the background, some answered 202 accepted; its audit waits for the queue
// to drain (drainQueue).
const queueStrategy = "queue"

// Bounds of drainQueue: how long it waits for a queue product's stream to empty, and how
// often it asks the API.
const (
	queueDrainTimeout  = 30 * time.Second
	queueDrainInterval = 100 * time.Millisecond
)

// drainQueue waits until the API's audit of queue product id says nothing is queued any more
// (Queue.Queued == 0): the consumers have written (or dead-lettered) every purchase answered
// 202, so that orders can be counted against the answers. It asks at most every interval for
// at most timeout (and at most timeout/interval+1 times), and returns an error saying how
// many purchases were still queued when it gave up.
func drainQueue(ctx context.Context, c *client.Client, id int64, timeout, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tries := int(timeout/interval) + 1
	var last error
	for range tries {
		a, err := c.Audit(ctx, id)
		switch {
		case err != nil:
			last = err
		case a.Queue == nil:
			return fmt.Errorf("drain the queue of product %d: the API's audit has no queue figures", id)
		case a.Queue.Queued == 0:
			return nil
		default:
			last = fmt.Errorf("%d purchases still queued", a.Queue.Queued)
		}
		select {
		case <-ctx.Done():
			return drainFailed(id, timeout, last)
		case <-time.After(interval):
		}
	}
	return drainFailed(id, timeout, last)
}

func drainFailed(id int64, timeout time.Duration, last error) error {
	if last == nil {
		last = errors.New("no answer")
	}
	return fmt.Errorf("the queue of product %d did not drain within %v: %w", id, timeout, last)
}
