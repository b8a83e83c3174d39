package order

import (
	"context"
	"errors"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
)

// leadBudget bounds the work of a batch's leader once it holds the lock (the statement,
// think_ms aside), so a hung database cannot keep its buyers waiting for ever.
const leadBudget = 10 * time.Second

// buyLocked is the dlock strategy, the design this project teaches: lock the product in
// Redis with a watchdog, then in one atomic statement (one transaction) re-check the stock,
// insert the order and decrement under the lock's fence, commit, and only then release.
//
// Buyers of one product who arrive at this process while its lock is being waited for or
// held join one batch (group commit): the buyer who opened the batch leads it, and serves
// the whole batch in that one statement under one lock. A batch of one is the plain
// one-order-per-lock path. Every buyer still gets their own answer.
//
// If the lock is lost while the statement runs, the watched context is cancelled, and so is
// the statement, which rolls back. If the holder is paused so long that another process
// takes the lock and writes, the fence makes the late write fail. Either way the buyers get
// ErrBusy and nothing is written.
func (s *Service) buyLocked(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	r := &request{user: userID, res: make(chan result, 1)}
	bt, lead := s.batches.join(p.ID, r)
	if lead {
		s.lead(ctx, p, bt)
	}
	select {
	case res := <-r.res:
		return res.o, res.err
	case <-ctx.Done():
		if s.batches.leave(bt, r) {
			return Order{}, context.Cause(ctx)
		}
		res := <-r.res // the leader has taken this buyer: the answer is on its way
		return res.o, res.err
	}
}

// lead obtains the product's lock, takes the batch, writes it in one statement and answers
// every buyer in it as soon as it committed, before the lock is released. It works on a
// context detached from its own buyer's, since the other buyers depend on it.
func (s *Service) lead(ctx context.Context, p inventory.Product, bt *batch) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.LockWait+p.Think()+leadBudget)
	defer cancel()
	var (
		reqs     []*request
		answered bool
	)
	opt := &dlock.Options{Wait: s.cfg.LockWait}
	err := s.Locks.Do(ctx, s.Keys.Lock(p.ID), s.cfg.LockTTL, opt, func(ctx context.Context, l *dlock.Lock) error {
		s.linger(ctx, bt)
		reqs = s.batches.take(p.ID, bt)
		err := s.serve(ctx, p, reqs, l.Fence())
		answered = err == nil
		return err
	})
	if answered {
		// The orders stand even if the lock was lost between COMMIT and release: they were
		// written under a fence no newer holder had overtaken.
		if err != nil && !errors.Is(err, dlock.ErrLost) {
			s.Logger.Warn("after a committed batch", "product_id", p.ID, "err", err)
		}
		return
	}
	if reqs == nil { // the lock was never had: the batch is still open
		reqs = s.batches.take(p.ID, bt)
	}
	if s.Observer != nil {
		s.Observer.Batch(len(reqs))
	}
	for _, r := range reqs {
		r.res <- result{err: err}
	}
}

// serve writes one batch under the lock's fence and answers its buyers once it committed.
func (s *Service) serve(ctx context.Context, p inventory.Product, reqs []*request, fence int64) error {
	results, left, err := s.writeBatch(ctx, s.db.WithContext(ctx), p, users(reqs), fence)
	if err != nil {
		return err
	}
	s.soldOutIfZero(ctx, p.ID, left)
	if s.Observer != nil {
		s.Observer.Batch(len(reqs))
	}
	for i, r := range reqs {
		r.res <- results[i]
	}
	return nil
}

// linger holds the lock for up to BatchLinger for more buyers to join, unless the batch is
// full first. With the default linger of zero, batches form only from buyers who arrive
// while the lock is being waited for.
func (s *Service) linger(ctx context.Context, bt *batch) {
	if s.cfg.BatchLinger <= 0 {
		return
	}
	t := time.NewTimer(s.cfg.BatchLinger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-bt.full:
	case <-ctx.Done():
	}
}

func users(reqs []*request) []int64 {
	u := make([]int64, len(reqs))
	for i, r := range reqs {
		u[i] = r.user
	}
	return u
}
