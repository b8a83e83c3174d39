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
// queued buyer is closed or it has been idle for consumerIdle. It is safe for concurrent use.
type consumers struct {
	mu      sync.Mutex
	running map[int64]*int  // a token per running consumer
	ctx     context.Context // ends when the queued buyer is closed
	stop    context.CancelFunc
	wg      sync.WaitGroup
	name    string // this process's consumer name in the group
}

func newConsumers() *consumers {
	ctx, stop := context.WithCancel(context.Background())
	host, _ := os.Hostname()
	return &consumers{running: map[int64]*int{}, ctx: ctx, stop: stop,
		name: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), newToken()[:8])}
}

// ensure starts the consumer of product id in this process unless it runs. Call it after the
// purchase is queued: a consumer deciding to stop for idleness decides under the same lock,
// after looking at the stream, so it either sees the purchase or is replaced.
func (c *consumers) ensure(q *queuedBuyer, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] != nil || c.ctx.Err() != nil {
		return
	}
	token := new(int)
	c.running[id] = token
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.done(id, token)
		q.consume(c.ctx, id, token)
	}()
}

// done marks the consumer of product id that token names stopped.
func (c *consumers) done(id int64, token *int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] == token {
		delete(c.running, id)
	}
}

// stopIdle stops the consumer token of product id if empty reports the stream empty, under
// the lock ensure takes; it reports whether it did.
func (c *consumers) stopIdle(id int64, token *int, empty func() bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] != token || !empty() {
		return false
	}
	delete(c.running, id)
	return true
}

// close stops every consumer and waits for the batches being written. What they read and
// did not write stays pending in the streams; other processes claim it (Config.QueueClaimIdle).
func (c *consumers) close() {
	c.mu.Lock()
	c.stop() // under the lock: no consumer starts after this
	c.mu.Unlock()
	c.wg.Wait()
}

// start starts this process's consumer of every queue product whose stream holds
// purchases, so that a backlog left by a process that died is written even if no buyer of
// the product reaches this one. It looks only at the queue products purchases were queued of
// lately or whose streams are not empty (inventory.Queue.Backlogged), not at every queue
// product ever created: its cost does not grow with history, and it reads nothing from
// PostgreSQL.
func (q *queuedBuyer) start(ctx context.Context) error {
	ids, err := q.queue.Backlogged(ctx)
	for _, id := range ids {
		q.consumers.ensure(q, id)
	}
	if err != nil {
		return fmt.Errorf("queue products: %w", err)
	}
	return nil
}

// close stops this process's consumers (see consumers.close).
func (q *queuedBuyer) close() { q.consumers.close() }

// consume is the consumer of product id in this process: it claims purchases another
// consumer read and left unacknowledged for QueueClaimIdle (a process that died), reads new
// ones in batches of up to BatchMax, and writes each batch (see writeQueued).
func (q *queuedBuyer) consume(ctx context.Context, id int64, token *int) {
	name := q.consumers.name
	var lastClaim, lastWork time.Time
	lastWork = time.Now()
	backoff := newBackoff()
	for ctx.Err() == nil {
		var entries []inventory.Entry
		var err error
		if time.Since(lastClaim) >= q.cfg.QueueClaimIdle/2 {
			lastClaim = time.Now()
			entries, err = q.queue.Claim(ctx, id, name, q.cfg.QueueClaimIdle, q.cfg.BatchMax)
		}
		if err == nil && len(entries) == 0 {
			entries, err = q.queue.Read(ctx, id, name, q.cfg.BatchMax, time.Second)
		}
		if errors.Is(err, inventory.ErrNoGroup) {
			err = q.queue.EnsureGroup(ctx, id)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			q.log.WarnContext(ctx, "queue consumer cannot read", "product_id", id, "err", err)
			backoff.wait(ctx)
			continue
		case len(entries) == 0:
			if time.Since(lastWork) > consumerIdle && q.consumers.stopIdle(id, token, func() bool {
				st, err := q.queue.State(ctx, id)
				return err == nil && st.Queued == 0
			}) {
				return
			}
			continue
		}
		backoff.reset()
		lastWork = time.Now()
		q.writeQueued(ctx, id, entries)
	}
}

// writeQueued writes one batch of queued purchases in one statement (sell.sql, fence 0),
// acknowledges what PostgreSQL settled, and announces it. While PostgreSQL is unavailable it
// retries, holding the batch (the stream holds the rest): nothing is lost, and the backlog is
// written once PostgreSQL is back. A write that fails QueueAttempts times for another reason
// is dead-lettered and its units given back; buyers PostgreSQL finds no unit for are
// dead-lettered as sold out.
func (q *queuedBuyer) writeQueued(ctx context.Context, id int64, entries []inventory.Entry) {
	users, ids := make([]int64, len(entries)), make([]string, len(entries))
	for i, e := range entries {
		users[i], ids[i] = e.User, e.ID
	}
	p, err := q.products.Meta(ctx, id)
	if err == nil {
		err = q.think(ctx, p) // once per batch, outside the write's bound
	}
	backoff := newBackoff()
	for attempt := 1; ; attempt++ {
		var results []result
		var left int
		if err == nil {
			q.touch(ctx, id, entries)
			results, left, err = q.writeQueuedOnce(ctx, p, users, ids)
		}
		switch {
		case err == nil:
			// Settled whatever happens to ctx now: the batch committed.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			q.settleQueued(sctx, id, entries, results)
			q.soldOutIfZero(sctx, id, left)
			cancel()
			q.observer.Batch(len(entries))
			return
		case ctx.Err() != nil:
			return // closing: the batch stays pending, and another process claims it
		case IsUnavailable(err) || errors.Is(err, ErrOutcomeUnknown) || attempt < q.cfg.QueueAttempts:
			q.log.WarnContext(ctx, "queued batch not written; retrying", "product_id", id, "buyers", len(entries),
				"attempt", attempt, "err", err)
			backoff.wait(ctx)
			if p.ID == 0 { // the product's fields were not read yet
				if p, err = q.products.Meta(ctx, id); err == nil {
					err = q.think(ctx, p)
				}
			} else {
				err = nil
			}
		default:
			q.log.ErrorContext(ctx, "queued batch dead-lettered; its units go back", "product_id", id,
				"buyers", len(entries), "err", err)
			q.deadLetter(ctx, id, entries, deadFailed, true)
			return
		}
	}
}

// writeQueuedOnce is one attempt at a queued batch, bounded by PurchaseTimeout: a PostgreSQL
// that hangs rather than refuses fails the attempt, which is then retried as an outage (its
// statements abandoned, COMMIT never sent: nothing written).
func (q *queuedBuyer) writeQueuedOnce(ctx context.Context, p inventory.Product, users []int64, ids []string) ([]result, int, error) {
	ctx, cancel := context.WithTimeout(ctx, q.cfg.PurchaseTimeout)
	defer cancel()
	return q.writeBatch(ctx, p, users, ids, 0)
}

// touch keeps the batch this process's consumer is writing from being claimed by another
// (see inventory.Queue.Touch); if it fails, or the process stops between the batch's COMMIT
// and its XACK, the batch is claimed and written again, and finds its entries written: each
// order records its stream entry (see writeBatch), whatever became of it since.
func (q *queuedBuyer) touch(ctx context.Context, id int64, entries []inventory.Entry) {
	if err := q.queue.Touch(ctx, id, q.consumers.name, entries); err != nil {
		q.log.WarnContext(ctx, "queued batch not touched", "product_id", id, "err", err)
	}
}

// settleQueued acknowledges the entries PostgreSQL settled (written, or the buyer had an
// order), dead-letters those it found no unit for, and announces both.
func (q *queuedBuyer) settleQueued(ctx context.Context, id int64, entries []inventory.Entry, results []result) {
	var done, had, soldOut []inventory.Entry
	n := notice{Product: id}
	for i, r := range results {
		var bought *PurchasedError
		switch {
		case r.err == nil:
			done = append(done, entries[i])
			n.Orders = append(n.Orders, r.o)
		case errors.As(r.err, &bought) && r.had: // admitted again by a gate that forgot the buyer
			had = append(had, entries[i])
			n.Had = append(n.Had, bought.Order)
		case errors.As(r.err, &bought): // the entry's own order, written before
			done = append(done, entries[i])
			n.Orders = append(n.Orders, bought.Order)
		default: // sold out in PostgreSQL
			soldOut = append(soldOut, entries[i])
		}
	}
	if len(had) > 0 {
		// Their units stay taken: a gate that forgot a buyer (Redis back from older data)
		// counted the unit the buyer holds as free, and admitting them again took it back.
		q.log.WarnContext(ctx, "buyers with an order admitted again (Redis forgot them)", "product_id", id, "buyers", len(had))
	}
	if err := q.queue.Ack(ctx, id, append(done, had...)); err != nil {
		// Written all the same: a consumer that claims them later finds the orders.
		q.log.WarnContext(ctx, "queued purchases written, not acknowledged", "product_id", id, "err", err)
	}
	if moved := q.deadLetter(ctx, id, soldOut, deadSoldOut, false); len(moved) > 0 {
		n.Dead = map[int64]string{}
		for _, e := range moved {
			n.Dead[e.User] = deadSoldOut
		}
	}
	q.announce(ctx, n)
}

// deadLetter moves entries to the product's dead-letter stream (see inventory.Queue) and
// returns those it moved (not those another consumer wrote meanwhile).
func (q *queuedBuyer) deadLetter(ctx context.Context, id int64, entries []inventory.Entry, reason string, giveBack bool) []inventory.Entry {
	moved, err := q.queue.DeadLetter(ctx, id, entries, reason, giveBack)
	if err != nil {
		q.log.ErrorContext(ctx, "dead-lettering failed; the entries stay pending and are claimed again",
			"product_id", id, "err", err)
	}
	if len(moved) > 0 {
		q.observer.DeadLettered(reason, len(moved))
	}
	if reason != deadSoldOut && len(moved) > 0 {
		n := notice{Product: id, Dead: map[int64]string{}}
		for _, e := range moved {
			n.Dead[e.User] = reason
		}
		q.announce(ctx, n)
	}
	return moved
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
