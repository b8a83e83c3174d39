package order

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// Reasons a queued purchase is dead-lettered.
const (
	deadSoldOut = "sold_out" // PostgreSQL had no unit left (the gate admitted too many)
	deadFailed  = "failed"   // its batch's write kept failing, not for an outage
)

// consumerIdle is how long a product's consumer in this process reads nothing, with an empty
// stream, before it stops; the next purchase of the product starts it again.
const consumerIdle = time.Minute

// consumers runs at most one consumer per queue product in this process, each until the
// Service is closed or it has been idle for consumerIdle. It is safe for concurrent use.
type consumers struct {
	mu      sync.Mutex
	running map[int64]bool
	ctx     context.Context // ends when the Service is closed
	stop    context.CancelFunc
	wg      sync.WaitGroup
	name    string // this process's consumer name in the group
}

func newConsumers() *consumers {
	ctx, stop := context.WithCancel(context.Background())
	host, _ := os.Hostname()
	return &consumers{running: map[int64]bool{}, ctx: ctx, stop: stop,
		name: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), newToken()[:8])}
}

// ensure starts the consumer of product id in this process unless it runs.
func (c *consumers) ensure(s *Service, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] || c.ctx.Err() != nil {
		return
	}
	c.running[id] = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		s.consume(c.ctx, id)
	}()
}

// done marks product id's consumer stopped, unless the Service is closing.
func (c *consumers) done(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, id)
}

// close stops every consumer and waits for the batches being written. What they read and
// did not write stays pending in the streams; other processes claim it (Config.QueueClaimIdle).
func (c *consumers) close() {
	c.stop()
	c.wg.Wait()
}

// StartQueues starts this process's consumer of every queue product whose stream holds
// purchases, so that a backlog left by a process that died is written even if no buyer of
// the product reaches this one.
func (s *Service) StartQueues(ctx context.Context) error {
	var ids []int64
	err := s.db.WithContext(ctx).Raw(`SELECT id FROM products WHERE strategy = ?`, inventory.StrategyQueue).Scan(&ids).Error
	if err != nil {
		return fmt.Errorf("queue products: %w", err)
	}
	for _, id := range ids {
		if st, err := s.Queue.State(ctx, id); err == nil && st.Queued > 0 {
			s.consumers.ensure(s, id)
		}
	}
	return nil
}

// consume is the consumer of product id in this process: it claims purchases another
// consumer read and left unacknowledged for QueueClaimIdle (a process that died), reads new
// ones in batches of up to BatchMax, and writes each batch (see writeQueued).
func (s *Service) consume(ctx context.Context, id int64) {
	defer s.consumers.done(id)
	name := s.consumers.name
	var lastClaim, lastWork time.Time
	lastWork = time.Now()
	backoff := newBackoff()
	for ctx.Err() == nil {
		var entries []inventory.Entry
		var err error
		if time.Since(lastClaim) >= s.cfg.QueueClaimIdle/2 {
			lastClaim = time.Now()
			entries, err = s.Queue.Claim(ctx, id, name, s.cfg.QueueClaimIdle, s.cfg.BatchMax)
		}
		if err == nil && len(entries) == 0 {
			entries, err = s.Queue.Read(ctx, id, name, s.cfg.BatchMax, time.Second)
		}
		if errors.Is(err, inventory.ErrNoGroup) {
			err = s.Queue.EnsureGroup(ctx, id)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.Logger.Warn("queue consumer cannot read", "product_id", id, "err", err)
			backoff.wait(ctx)
			continue
		case len(entries) == 0:
			if time.Since(lastWork) > consumerIdle {
				if st, err := s.Queue.State(ctx, id); err == nil && st.Queued == 0 {
					return
				}
			}
			continue
		}
		backoff.reset()
		lastWork = time.Now()
		s.writeQueued(ctx, id, entries)
	}
}

// writeQueued writes one batch of queued purchases in one statement (sell.sql, fence 0),
// acknowledges what PostgreSQL settled, and announces it. While PostgreSQL is unavailable it
// retries, holding the batch (the stream holds the rest): nothing is lost, and the backlog is
// written once PostgreSQL is back. A write that fails QueueAttempts times for another reason
// is dead-lettered and its units given back; buyers PostgreSQL finds no unit for are
// dead-lettered as sold out.
func (s *Service) writeQueued(ctx context.Context, id int64, entries []inventory.Entry) {
	users := make([]int64, len(entries))
	for i, e := range entries {
		users[i] = e.User
	}
	backoff := newBackoff()
	for attempt := 1; ; attempt++ {
		results, left, err := s.writeQueuedOnce(ctx, id, users)
		switch {
		case ctx.Err() != nil:
			return // closing: the batch stays pending, and another process claims it
		case err == nil:
			s.settleQueued(ctx, id, entries, results)
			s.soldOutIfZero(ctx, id, left)
			if s.Observer != nil {
				s.Observer.Batch(len(entries))
			}
			return
		case IsUnavailable(err) || errors.Is(err, ErrOutcomeUnknown) || attempt < s.cfg.QueueAttempts:
			s.Logger.Warn("queued batch not written; retrying", "product_id", id, "buyers", len(entries),
				"attempt", attempt, "err", err)
			backoff.wait(ctx)
		default:
			s.Logger.Error("queued batch dead-lettered; its units go back", "product_id", id,
				"buyers", len(entries), "err", err)
			s.deadLetter(ctx, id, entries, deadFailed, true)
			return
		}
	}
}

// writeQueuedOnce is one attempt at a queued batch, bounded by PurchaseTimeout (think_ms
// included): a PostgreSQL that hangs rather than refuses fails the attempt, which is then
// retried as an outage (its statements abandoned, COMMIT never sent: nothing written).
func (s *Service) writeQueuedOnce(ctx context.Context, id int64, users []int64) ([]result, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.PurchaseTimeout)
	defer cancel()
	p, err := s.Products.Meta(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if err := think(ctx, p); err != nil {
		return nil, 0, err
	}
	return s.writeBatch(ctx, p, users, 0)
}

// settleQueued acknowledges the entries PostgreSQL settled (written, or the buyer had an
// order), dead-letters those it found no unit for, and announces both.
func (s *Service) settleQueued(ctx context.Context, id int64, entries []inventory.Entry, results []result) {
	var done, soldOut []inventory.Entry
	n := notice{Product: id}
	for i, r := range results {
		var had *PurchasedError
		switch {
		case r.err == nil:
			done = append(done, entries[i])
			n.Orders = append(n.Orders, r.o)
		case errors.As(r.err, &had):
			done = append(done, entries[i])
			n.Orders = append(n.Orders, had.Order)
		default: // sold out in PostgreSQL
			soldOut = append(soldOut, entries[i])
		}
	}
	if err := s.Queue.Ack(ctx, id, done); err != nil {
		// Written all the same: a consumer that claims them later finds the orders.
		s.Logger.Warn("queued purchases written, not acknowledged", "product_id", id, "err", err)
	}
	if len(soldOut) > 0 {
		s.deadLetter(ctx, id, soldOut, deadSoldOut, false)
		n.Dead = map[int64]string{}
		for _, e := range soldOut {
			n.Dead[e.User] = deadSoldOut
		}
	}
	s.announce(ctx, n)
}

// deadLetter moves entries to the product's dead-letter stream (see inventory.Queue).
func (s *Service) deadLetter(ctx context.Context, id int64, entries []inventory.Entry, reason string, giveBack bool) {
	if err := s.Queue.DeadLetter(ctx, id, entries, reason, giveBack); err != nil {
		s.Logger.Error("dead-lettering failed; the entries stay pending and are claimed again",
			"product_id", id, "err", err)
		return
	}
	if s.Observer != nil {
		s.Observer.DeadLettered(reason, len(entries))
	}
	if reason != deadSoldOut {
		n := notice{Product: id, Dead: map[int64]string{}}
		for _, e := range entries {
			n.Dead[e.User] = reason
		}
		s.announce(ctx, n)
	}
}

// backoff is a wait that doubles from 50 ms to 2 s.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{d: 50 * time.Millisecond} }

func (b *backoff) reset() { b.d = 50 * time.Millisecond }

func (b *backoff) wait(ctx context.Context) {
	t := time.NewTimer(b.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	b.d = min(2*b.d, 2*time.Second)
}
