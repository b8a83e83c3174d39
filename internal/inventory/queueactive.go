package inventory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// QueueGrace is how long an idle queue product stays registered as live; it must exceed a
// purchase's deadline plus QueueGrace/4.
const QueueGrace = time.Minute

// ErrNotQueued means Enqueue failed before queueing the purchase.
var ErrNotQueued = errors.New("inventory: purchase not queued")

// markEvery is how often one process marks a product it queues purchases of.
const markEvery = QueueGrace / 4

// mark records product id in the registry of live queue products (Keys.QueueActive) before a
// purchase is appended to its stream, unless this Queue did within markEvery.
func (q *Queue) mark(ctx context.Context, id int64) error {
	if at, ok := q.marked.Load(id); ok && time.Since(at.(time.Time)) < markEvery {
		return nil
	}
	now := time.Now()
	if err := markScript.Run(ctx, q.rdb, []string{q.keys.QueueActive()}, id).Err(); err != nil {
		return fmt.Errorf("mark queue product %d live: %w: %w", id, ErrNotQueued, err)
	}
	q.marked.Store(id, now)
	return nil
}

// Backlogged returns the live queue products with queued purchases, dropping those idle past
// QueueGrace.
func (q *Queue) Backlogged(ctx context.Context) ([]int64, error) {
	q.marked.Range(func(id, at any) bool { // forget this process's old marks
		if time.Since(at.(time.Time)) >= markEvery {
			q.marked.Delete(id)
		}
		return true
	})
	members, err := q.rdb.ZRange(ctx, q.keys.QueueActive(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("live queue products: %w", err)
	}
	if len(members) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(members))
	lens := make([]*redis.IntCmd, 0, len(members))
	pipe := q.rdb.Pipeline()
	for _, m := range members {
		id, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			continue // not written by mark.lua
		}
		ids = append(ids, id)
		lens = append(lens, pipe.XLen(ctx, q.keys.QueueStream(id)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("streams of live queue products: %w", err)
	}
	var backlogged, empty []int64
	for i, id := range ids {
		if lens[i].Val() > 0 {
			backlogged = append(backlogged, id)
		} else {
			empty = append(empty, id)
		}
	}
	if len(empty) > 0 {
		pipe := q.rdb.Pipeline()
		grace := strconv.FormatInt(QueueGrace.Milliseconds(), 10)
		for _, id := range empty {
			forgetScript.Eval(ctx, pipe, []string{q.keys.QueueActive()}, id, grace) // EVALSHA has no fallback in a pipeline
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return backlogged, fmt.Errorf("forget idle queue products: %w", err)
		}
	}
	return backlogged, nil
}
