package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
)

// ErrAccepted means the purchase is queued, not written within Config.QueueWait; OrderOf tells.
var ErrAccepted = errors.New("order: accepted, not written yet")

// queuedBuyer is the queue strategy: one Lua script admits the buyer, takes the unit and appends
// the purchase to the product's Redis Stream (inventory.Queue), and the API processes' consumers
// write it in batches (see consume). A buyer waits up to Config.QueueWait for its order, then gets
// ErrAccepted; a buyer admitted before gets ErrAlreadyPurchased or ErrAccepted. Start and Listen
// start its background work, Close stops it.
type queuedBuyer struct {
	*core
	queue     *inventory.Queue
	seeder    *seeder
	waiters   waiters    // buyers waiting for their purchases to be written
	consumers *consumers // this process's consumers
}

func newQueuedBuyer(c *core, queue *inventory.Queue, seeder *seeder) *queuedBuyer {
	return &queuedBuyer{core: c, queue: queue, seeder: seeder, consumers: newConsumers()}
}

func (q *queuedBuyer) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	ch, done := q.waiters.add(p.ID, userID)
	defer done()
	entry, err := q.enqueue(ctx, p.ID, userID)
	if errors.Is(err, inventory.ErrAlreadyAdmitted) {
		o, lerr := orderOf(q.db.WithContext(ctx), p.ID, userID)
		switch {
		case lerr == nil:
			q.consumers.ensure(q, p.ID)
			return Order{}, &PurchasedError{Order: o}
		case errors.Is(lerr, ErrOrderNotFound):
			// No live order: the gate counts the buyer for a purchase still queued, or for a
			// reservation that ended and whose unit it has not taken back yet. Asked in this
			// order (a reservation only ever ends), so that one ending between the two
			// questions is not taken for a queued purchase, and answered 202 with nothing queued.
			settled, serr := q.seeder.returns.settleUser(ctx, p.ID, userID)
			switch {
			case serr != nil:
				err = fmt.Errorf("%w: %w", ErrBusy, serr)
			case settled:
				entry, err = q.enqueue(ctx, p.ID, userID) // counted for a reservation that ended: not any more
			}
			if settled && errors.Is(err, inventory.ErrAlreadyAdmitted) {
				// Counted still, for a purchase queued since, or by a gate from before the return
				// (Redis came back older): verified, it counts the buyer no longer.
				if redone, verr := q.seeder.verifyIfStale(ctx, p.ID); verr != nil {
					err = fmt.Errorf("%w: %w", ErrBusy, verr)
				} else if redone {
					entry, err = q.enqueue(ctx, p.ID, userID)
				}
			}
		}
	}
	q.consumers.ensure(q, p.ID) // after the purchase is queued (see consumers.ensure)
	switch {
	case errors.Is(err, inventory.ErrAlreadyAdmitted):
		// Queued by an earlier request (or PostgreSQL cannot tell): wait for it too.
		o, err := q.awaitQueued(ctx, p.ID, userID, "", ch)
		if err != nil {
			return Order{}, err
		}
		return Order{}, &PurchasedError{Order: o}
	case err != nil:
		return Order{}, err
	}
	return q.awaitQueued(ctx, p.ID, userID, entry, ch)
}

// enqueue admits the buyer and queues its purchase, seeding the gate from PostgreSQL first
// when it is missing, and verifying it first when it is sold out in a Redis data set it was
// not stamped in (see verifyGate).
func (q *queuedBuyer) enqueue(ctx context.Context, id, userID int64) (string, error) {
	entry, err := q.queue.Enqueue(ctx, id, userID)
	switch {
	case errors.Is(err, inventory.ErrGateNotSeeded):
		if err := q.seeder.seedGate(ctx, id, inventory.SeedInit); err != nil {
			return "", err
		}
		entry, err = q.queue.Enqueue(ctx, id, userID)
	case errors.Is(err, inventory.ErrGateUnverified):
		if err := q.seeder.verifyGate(ctx, id); err != nil {
			return "", err
		}
		entry, err = q.queue.Enqueue(ctx, id, userID)
	}
	switch {
	case err == nil, errors.Is(err, inventory.ErrSoldOut), errors.Is(err, inventory.ErrAlreadyAdmitted):
		return entry, err
	case errors.Is(err, inventory.ErrGateNotSeeded), errors.Is(err, inventory.ErrGateUnverified):
		return "", fmt.Errorf("%w: %w", ErrBusy, err)
	case errors.Is(err, inventory.ErrNotQueued): // failed before the script was sent
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	case neverSent(err):
		return "", err // nothing reached Redis: unavailable, nothing written
	case replied(err):
		// Redis answered, with an error: the script did not run, or stopped at the error. A
		// refusal to serve for now (OOM, READONLY, MASTERDOWN, ...: see redisUnavailable) comes
		// before the script's first write, as Redis checks it at the first write command and
		// never after one: nothing was written, and the purchase is unavailable. Any other
		// error reply is a bug.
		return "", err
	}
	// The script may have run and its reply been lost: the purchase may be queued, and will
	// then be written. Only a lookup (or a retry, which never buys twice) can tell.
	return "", fmt.Errorf("%w: queuing the purchase got no answer from Redis: %w", ErrOutcomeUnknown, err)
}

// replied reports whether err is an error reply from Redis: an answer, so none was lost.
// (go-redis's own CROSSSLOT, a command it never sent, counts too.)
func replied(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}

// neverSent reports whether a Redis call failed before its command could reach the server: a
// connection refused, no connection from the pool in time, or a closed client.
func neverSent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, redis.ErrPoolExhausted) || errors.Is(err, redis.ErrClosed)
}

// awaitQueued waits for the consumer's word on the buyer's queued purchase (stream entry
// entry), up to QueueWait and the purchase's deadline. Past it, PostgreSQL is asked once: an
// order from another entry is a *PurchasedError, none is ErrAccepted (the purchase stands).
func (q *queuedBuyer) awaitQueued(ctx context.Context, id, userID int64, entry string, ch <-chan queued) (Order, error) {
	t := time.NewTimer(q.cfg.QueueWait)
	defer t.Stop()
	select {
	case word := <-ch:
		return word.o, word.err
	case <-t.C:
	case <-ctx.Done():
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	o, from, err := orderAndEntryOf(q.db.WithContext(lctx), id, userID)
	switch {
	case err != nil:
		return Order{}, ErrAccepted
	case entry != "" && from != entry: // the buyer's order is older than this request
		return Order{}, &PurchasedError{Order: o}
	}
	return o, nil
}

// queued is a consumer's word on one queued purchase: its order, or why it was not written.
type queued struct {
	o   Order
	err error
}

type waitKey struct{ product, user int64 }

// waiters are the requests of this process waiting for their queued purchases: one user may
// have several at once (a retry while the first is in flight), and each gets the word. It is
// safe for concurrent use.
type waiters struct {
	mu sync.Mutex
	m  map[waitKey][]chan queued
}

// add registers one request of the buyer; done unregisters it.
func (w *waiters) add(product, user int64) (<-chan queued, func()) {
	k := waitKey{product, user}
	ch := make(chan queued, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = make(map[waitKey][]chan queued)
	}
	w.m[k] = append(w.m[k], ch)
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		chans := slices.DeleteFunc(w.m[k], func(c chan queued) bool { return c == ch })
		if len(chans) == 0 {
			delete(w.m, k)
		} else {
			w.m[k] = chans
		}
	}
}

// tell gives every request of the buyer of k waiting in this process its word.
func (w *waiters) tell(k waitKey, word queued) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.m[k] {
		select {
		case ch <- word:
		default:
		}
	}
}

// notice is what a consumer announces of one written batch on Keys.QueueChannel.
type notice struct {
	Product int64            `json:"p"`
	Orders  []Order          `json:"o,omitempty"` // written from the buyer's entry: 201
	Had     []Order          `json:"h,omitempty"` // the buyer had it already: already_purchased
	Dead    map[int64]string `json:"d,omitempty"` // user -> reason: not written
}

// announce tells the buyers waiting in every process (this one through its own subscription)
// what became of their queued purchases. A lost announcement costs the buyer QueueWait and a
// read of PostgreSQL, nothing more.
func (q *queuedBuyer) announce(ctx context.Context, n notice) {
	b, err := json.Marshal(n)
	if err == nil {
		err = q.queue.Announce(ctx, q.keys.QueueChannel(), b)
	}
	if err != nil {
		q.log.WarnContext(ctx, "queue announcement failed; its buyers read PostgreSQL after QUEUE_WAIT",
			"product_id", n.Product, "err", err)
	}
}

// listen delivers the consumers' announcements to this process's waiting buyers until ctx
// ends (see Service.ListenQueue).
func (q *queuedBuyer) listen(ctx context.Context) {
	q.queue.Listen(ctx, q.keys.QueueChannel(), func(payload string) {
		var n notice
		if err := json.Unmarshal([]byte(payload), &n); err != nil {
			q.log.WarnContext(ctx, "bad queue announcement", "err", err)
			return
		}
		for _, o := range n.Orders {
			q.waiters.tell(waitKey{n.Product, o.UserID}, queued{o: o})
		}
		for _, o := range n.Had {
			q.waiters.tell(waitKey{n.Product, o.UserID}, queued{err: &PurchasedError{Order: o}})
		}
		for u, reason := range n.Dead {
			q.waiters.tell(waitKey{n.Product, u}, queued{err: deadError(reason)})
		}
	})
}

// deadError is the answer of a buyer whose queued purchase was dead-lettered.
func deadError(reason string) error {
	if reason == deadSoldOut {
		return fmt.Errorf("queued purchase not written: %w", inventory.ErrSoldOut)
	}
	return fmt.Errorf("%w: queued purchase not written (%s); its unit was given back", ErrBusy, reason)
}
