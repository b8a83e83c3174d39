package inventory

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// SoldOut is the sold-out fast path: a process-local set of product ids known to be sold
// out, shared between API processes through Redis. A product never gets stock back (there
// is no restock), so a mark is final and checking it costs no round trip at all.
//
// The mark is an optimisation, never a guard: a process that has not heard of it yet reads
// PostgreSQL, sees stock 0, and marks it itself. It is safe for concurrent use.
type SoldOut struct {
	rdb   redis.UniversalClient
	keys  Keys
	log   *slog.Logger
	local sync.Map // int64 -> struct{}
}

// NewSoldOut returns a SoldOut sharing marks through rdb under keys.
func NewSoldOut(rdb redis.UniversalClient, keys Keys, log *slog.Logger) *SoldOut {
	return &SoldOut{rdb: rdb, keys: keys, log: log}
}

// Is reports whether product id is known to be sold out.
func (s *SoldOut) Is(id int64) bool {
	_, ok := s.local.Load(id)
	return ok
}

// Mark records that product id is sold out, here and, best effort, for every other process.
func (s *SoldOut) Mark(ctx context.Context, id int64) {
	if _, loaded := s.local.LoadOrStore(id, struct{}{}); loaded {
		return
	}
	if err := announce(ctx, s.rdb, s.keys.SoldOutChannel(), id); err != nil {
		s.log.Warn("sharing sold-out mark failed; other processes will find out from PostgreSQL",
			"product_id", id, "err", err)
	}
}

// Listen applies the marks other processes announce until ctx ends. Run it in a goroutine.
func (s *SoldOut) Listen(ctx context.Context) {
	listenIDs(ctx, s.rdb, s.keys.SoldOutChannel(), func(id int64) { s.local.Store(id, struct{}{}) })
}

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
