package inventory_test

import (
	"context"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
)

// pubSubMarks is the old design of the sold-out fast path, the negative control of the lift
// tests: a process-local set shared by pub/sub alone, a lift announced like a mark. A process
// that misses the lift's message trusts its mark for good.
type pubSubMarks struct {
	rdb   *redis.Client
	keys  inventory.Keys
	local sync.Map
}

func (m *pubSubMarks) Is(id int64) bool { _, ok := m.local.Load(id); return ok }

func (m *pubSubMarks) Mark(ctx context.Context, id int64) {
	if _, loaded := m.local.LoadOrStore(id, struct{}{}); !loaded {
		m.rdb.Publish(ctx, m.keys.SoldOutChannel(), id)
	}
}

func (m *pubSubMarks) Lift(ctx context.Context, id int64) error {
	m.local.Delete(id)
	return m.rdb.Publish(ctx, m.keys.SoldOutLiftChannel(), id).Err()
}

// Listen applies the marks and lifts other processes announce until ctx ends.
func (m *pubSubMarks) Listen(ctx context.Context) {
	sub := m.rdb.Subscribe(ctx, m.keys.SoldOutChannel(), m.keys.SoldOutLiftChannel())
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-sub.Channel():
			id, err := strconv.ParseInt(msg.Payload, 10, 64)
			switch {
			case err != nil:
			case msg.Channel == m.keys.SoldOutChannel():
				m.local.Store(id, struct{}{})
			default:
				m.local.Delete(id)
			}
		}
	}
}
