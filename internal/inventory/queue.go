package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// QueueGroup is the consumer group of every product's stream.
const QueueGroup = "writers"

// Queue is the queue strategy's gate and streams in Redis. Safe for concurrent use.
type Queue struct {
	rdb    redis.UniversalClient
	keys   Keys
	marked sync.Map // int64 -> time.Time: when this Queue last marked the product live (see mark)
}

// NewQueue returns a Queue in rdb under keys.
func NewQueue(rdb redis.UniversalClient, keys Keys) *Queue { return &Queue{rdb: rdb, keys: keys} }

// Entry is one queued purchase.
type Entry struct {
	ID   string // the stream entry's id
	User int64
}

// Enqueue admits the user and queues its purchase, returning the entry id. Errors: ErrSoldOut,
// ErrAlreadyAdmitted, ErrGateNotSeeded, ErrGateUnverified, ErrNotQueued, or a Redis error
// (maybe queued).
func (q *Queue) Enqueue(ctx context.Context, id, user int64) (string, error) {
	if err := q.mark(ctx, id); err != nil {
		return "", err
	}
	keys := []string{q.keys.GateStock(id), q.keys.GateBuyers(id), q.keys.QueueStream(id), q.keys.GateStamp(id)}
	res, err := runOnce(ctx, q.rdb, enqueueScript, keys, user).Result() // an error is the first try's
	if err != nil {
		return "", fmt.Errorf("enqueue in product %d: %w", id, err)
	}
	switch v := res.(type) {
	case string:
		return v, nil
	case int64:
		switch v {
		case 0:
			return "", fmt.Errorf("product %d: %w", id, ErrSoldOut)
		case -1:
			return "", ErrAlreadyAdmitted
		case -2:
			return "", ErrGateNotSeeded
		case -4:
			return "", fmt.Errorf("product %d: %w", id, ErrGateUnverified)
		}
	}
	return "", fmt.Errorf("enqueue in product %d: unexpected reply %v", id, res)
}

// EnsureGroup creates the product's stream and group, from the stream's start, if missing.
func (q *Queue) EnsureGroup(ctx context.Context, id int64) error {
	err := q.rdb.XGroupCreateMkStream(ctx, q.keys.QueueStream(id), QueueGroup, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("consumer group of product %d: %w", id, err)
	}
	return nil
}

// ErrNoGroup means the stream or its group is gone; EnsureGroup, then read again.
var ErrNoGroup = errors.New("inventory: no consumer group")

// Read gives consumer up to count unread entries, waiting up to block.
func (q *Queue) Read(ctx context.Context, id int64, consumer string, count int, block time.Duration) ([]Entry, error) {
	res, err := q.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: QueueGroup, Consumer: consumer,
		Streams: []string{q.keys.QueueStream(id), ">"}, Count: int64(count), Block: block}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil && strings.HasPrefix(err.Error(), "NOGROUP"):
		return nil, ErrNoGroup
	case err != nil:
		return nil, fmt.Errorf("read queue of product %d: %w", id, err)
	}
	var out []Entry
	for _, s := range res {
		if out, err = appendEntries(out, s.Messages); err != nil {
			return nil, fmt.Errorf("read queue of product %d: %w", id, err)
		}
	}
	return out, nil
}

// Claim gives consumer up to count entries unacknowledged for minIdle or longer.
func (q *Queue) Claim(ctx context.Context, id int64, consumer string, minIdle time.Duration, count int) ([]Entry, error) {
	msgs, _, err := q.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: q.keys.QueueStream(id), Group: QueueGroup,
		Consumer: consumer, MinIdle: minIdle, Start: "0-0", Count: int64(count)}).Result()
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "NOGROUP"):
		return nil, ErrNoGroup
	case err != nil:
		return nil, fmt.Errorf("claim in queue of product %d: %w", id, err)
	}
	out, err := appendEntries(nil, msgs)
	if err != nil {
		return nil, fmt.Errorf("claim in queue of product %d: %w", id, err)
	}
	return out, nil
}

func appendEntries(out []Entry, msgs []redis.XMessage) ([]Entry, error) {
	for _, m := range msgs {
		s, _ := m.Values["user"].(string)
		user, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("entry %s: user %q: %w", m.ID, s, err)
		}
		out = append(out, Entry{ID: m.ID, User: user})
	}
	return out, nil
}

// scriptChunk bounds how many entries one call of ack.lua or deadletter.lua takes: Lua's
// unpack, and Redis's patience with one script, have limits (BATCH_MAX may be 10,000).
const scriptChunk = 500

// Ack removes written entries from the stream.
func (q *Queue) Ack(ctx context.Context, id int64, entries []Entry) error {
	for chunk := range slices.Chunk(entries, scriptChunk) {
		args := make([]any, 0, len(chunk)+1)
		args = append(args, QueueGroup)
		for _, e := range chunk {
			args = append(args, e.ID)
		}
		if err := ackScript.Run(ctx, q.rdb, []string{q.keys.QueueStream(id)}, args...).Err(); err != nil {
			return fmt.Errorf("ack in queue of product %d: %w", id, err)
		}
	}
	return nil
}

// Touch resets the idle time of consumer's entries so that no one claims them.
func (q *Queue) Touch(ctx context.Context, id int64, consumer string, entries []Entry) error {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	err := q.rdb.XClaimJustID(ctx, &redis.XClaimArgs{Stream: q.keys.QueueStream(id), Group: QueueGroup,
		Consumer: consumer, Messages: ids}).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("touch entries in queue of product %d: %w", id, err)
	}
	return nil
}

// DeadLetter moves the still pending entries to the dead-letter stream, returning their
// units if giveBack, and returns those it moved.
func (q *Queue) DeadLetter(ctx context.Context, id int64, entries []Entry, reason string, giveBack bool) ([]Entry, error) {
	back := "0"
	if giveBack {
		back = "1"
	}
	keys := []string{q.keys.QueueStream(id), q.keys.QueueDead(id), q.keys.GateStock(id), q.keys.GateBuyers(id)}
	var moved []Entry
	for chunk := range slices.Chunk(entries, scriptChunk) {
		args := make([]any, 0, 3+2*len(chunk))
		args = append(args, QueueGroup, reason, back)
		for _, e := range chunk {
			args = append(args, e.ID, e.User)
		}
		ids, err := deadLetterScript.Run(ctx, q.rdb, keys, args...).StringSlice()
		if err != nil {
			return moved, fmt.Errorf("dead-letter in queue of product %d: %w", id, err)
		}
		for _, e := range chunk {
			if slices.Contains(ids, e.ID) {
				moved = append(moved, e)
			}
		}
	}
	return moved, nil
}

// QueueState is what Redis holds of a queue product.
type QueueState struct {
	Seeded bool
	Stock  int64 // units the gate has left
	Buyers int64 // users admitted: queued or written
	Queued int64 // entries in the stream: admitted, not yet written
	Dead   int64 // entries in the dead-letter stream
}

// State reads the Redis side of queue product id.
func (q *Queue) State(ctx context.Context, id int64) (QueueState, error) {
	pipe := q.rdb.Pipeline()
	stock := pipe.Get(ctx, q.keys.GateStock(id))
	buyers := pipe.SCard(ctx, q.keys.GateBuyers(id))
	queued := pipe.XLen(ctx, q.keys.QueueStream(id))
	dead := pipe.XLen(ctx, q.keys.QueueDead(id))
	_, err := pipe.Exec(ctx)
	if err != nil && !errors.Is(err, redis.Nil) {
		return QueueState{}, fmt.Errorf("queue state of product %d: %w", id, err)
	}
	s := QueueState{Buyers: buyers.Val(), Queued: queued.Val(), Dead: dead.Val()}
	if n, err := stock.Int64(); err == nil {
		s.Seeded, s.Stock = true, n
	}
	return s, nil
}

// Announce publishes payload on channel: the consumers' word to waiting buyers.
func (q *Queue) Announce(ctx context.Context, channel string, payload []byte) error {
	return q.rdb.Publish(ctx, channel, payload).Err()
}

// Listen calls fn with each payload on channel until ctx ends, reconnecting.
func (q *Queue) Listen(ctx context.Context, channel string, fn func(payload string)) {
	listen(ctx, q.rdb, channel, fn)
}
