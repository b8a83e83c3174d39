package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// AwaitDrained polls a queue product's audit every interval until nothing is queued and
// returns it. It fails when ctx ends or the product is not a queue product.
func (c *Client) AwaitDrained(ctx context.Context, id int64, interval time.Duration) (api.Audit, error) {
	var last error
	for {
		a, err := c.Audit(ctx, id)
		switch {
		case err != nil:
			last = err
		case a.Queue == nil:
			return a, fmt.Errorf("drain the queue of product %d: the audit has no queue figures", id)
		case a.Queue.Queued == 0:
			return a, nil
		default:
			last = fmt.Errorf("%d purchases still queued", a.Queue.Queued)
		}
		select {
		case <-ctx.Done():
			return api.Audit{}, fmt.Errorf("the queue of product %d did not drain: %w", id, errors.Join(last, context.Cause(ctx)))
		case <-time.After(interval):
		}
	}
}
