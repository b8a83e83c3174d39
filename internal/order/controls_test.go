package order_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// TestPauseReachesAnotherProcessByLease: a pause made through one API process is refused by
// another, which hears no announcement (its Store has no Controls), within the lease of its
// copy of the product; a resume likewise. The bound is what docs/api.md#merchants-controls says.
func TestPauseReachesAnotherProcessByLease(t *testing.T) {
	e := newEnv(t, order.Config{})
	other := newService(t, e, process{}, order.Config{})
	ctx := context.Background()
	p := e.product(t, 1000, inventory.StrategyOptimistic, 0)
	cached := time.Now()
	if _, err := other.Purchase(ctx, p.ID, 1); err != nil { // caches the product
		t.Fatal(err)
	}
	if _, err := e.app.Orders.Pause(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 2); !errors.Is(err, inventory.ErrPaused) {
		t.Fatalf("the process that paused: %v, want ErrPaused at once", err)
	}
	took, sold := untilOutcome(t, other, p.ID, 100, order.OutcomePaused)
	t.Logf("refused %v after the pause, %d sold meanwhile (the lease is %v)", took.Round(time.Millisecond), sold, inventory.ControlLease)
	if slack := 250 * time.Millisecond; took > inventory.ControlLease+slack {
		t.Fatalf("refused %v after the pause, past the lease %v (+%v)", took, inventory.ControlLease, slack)
	}
	if paused.Sub(cached) < inventory.ControlLease/2 && sold == 0 {
		// Negative control: a copy read just before the pause is trusted for its lease, so it is
		// the lease that bounds the refusal, not a read on every purchase.
		t.Fatal("the other process, which heard nothing, refused at once: what did it read?")
	}
	if _, err := e.app.Orders.Resume(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	took, _ = untilOutcome(t, other, p.ID, 10_000, order.OutcomeBought)
	if took > inventory.ControlLease+250*time.Millisecond {
		t.Fatalf("sold again %v after the resume, past the lease", took)
	}
	e.wantAudit(t, p.ID, e.audit(t, p.ID).Sold, e.audit(t, p.ID).Stock)
}

// untilOutcome buys product id on s as new users from first on, one every 10 ms, until one is
// answered want, and returns how long it took and how many were sold before. It fails the
// test after 5 s.
func untilOutcome(t *testing.T, s *order.Service, id, first int64, want string) (time.Duration, int) {
	t.Helper()
	start, sold := time.Now(), 0
	for u := first; time.Since(start) < 5*time.Second; u++ {
		_, err := s.Purchase(context.Background(), id, u)
		switch got := order.Outcome(err); got {
		case want:
			return time.Since(start), sold
		case order.OutcomeBought:
			sold++
		case order.OutcomePaused:
		default:
			t.Fatalf("user %d: %v", u, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s within 5 s", want)
	return 0, 0
}

// TestControlsAnnounced: with the announcement, another process's Store drops its copy at
// once, however long its lease; without it (a lost message), a copy is trusted for its lease
// and no longer.
func TestControlsAnnounced(t *testing.T) {
	e := newEnv(t, order.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keys := inventory.Keys{Prefix: e.prefix}
	listening := labStore(e.db)
	listening.SetControlLease(time.Hour)
	c := inventory.NewControls(e.rdb, keys, listening, slog.New(slog.DiscardHandler))
	go c.Listen(ctx)
	deaf := labStore(e.db) // hears nothing: its lease alone bounds it
	deaf.SetControlLease(300 * time.Millisecond)
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	for _, s := range []*inventory.Store{listening, deaf} {
		if got, err := s.Meta(ctx, p.ID); err != nil || got.PausedAt != nil {
			t.Fatalf("Meta = %+v, %v", got, err)
		}
	}
	time.Sleep(100 * time.Millisecond) // the subscription is up
	if _, err := e.app.Orders.Pause(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	seen := func(s *inventory.Store) time.Duration {
		for time.Since(start) < 3*time.Second {
			if got, err := s.Meta(ctx, p.ID); err == nil && got.PausedAt != nil {
				return time.Since(start)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("the pause never reached the store")
		return 0
	}
	if took := seen(listening); took > 200*time.Millisecond {
		t.Fatalf("the announced pause took %v, with a lease of an hour", took)
	}
	took := seen(deaf)
	if took > 300*time.Millisecond+100*time.Millisecond {
		t.Fatalf("the unannounced pause took %v, past the lease of 300 ms", took)
	}
	t.Logf("a store that heard nothing saw the pause after %v (lease 300 ms)", took.Round(time.Millisecond))
}

// TestEndEarly: an early end refuses new buyers sale_ended, answers a buyer who has an order
// already_purchased, never moves ends_at later, and is refused for a sale not started.
func TestEndEarly(t *testing.T) {
	e := newEnv(t, order.Config{})
	ctx := context.Background()
	for _, s := range inventory.Strategies {
		p := e.product(t, 5, s, 0)
		if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil && !errors.Is(err, order.ErrAccepted) {
			t.Fatal(err)
		}
		waitOrders(t, e, p.ID, 1)
		ended, err := e.app.Orders.End(ctx, p.ID)
		if err != nil || ended.EndsAt == nil {
			t.Fatalf("End = %+v, %v", ended, err)
		}
		if _, err := e.app.Orders.Purchase(ctx, p.ID, 2); !errors.Is(err, inventory.ErrEnded) {
			t.Fatalf("%s: a new buyer after the end: %v", s, err)
		}
		if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); !errors.Is(err, order.ErrAlreadyPurchased) {
			t.Fatalf("%s: a buyer with an order after the end: %v", s, err)
		}
		again, err := e.app.Orders.End(ctx, p.ID)
		if err != nil || !again.EndsAt.Equal(*ended.EndsAt) {
			t.Fatalf("a second end moved ends_at from %v to %v (%v)", ended.EndsAt, again.EndsAt, err)
		}
		e.wantAudit(t, p.ID, 1, 4)
	}
	later := time.Now().Add(time.Hour)
	p, err := e.store.Create(ctx, inventory.NewProduct{Name: "later", Stock: 1, StartsAt: &later})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Orders.End(ctx, p.ID); !errors.Is(err, inventory.ErrNotStarted) {
		t.Fatalf("end of a sale not started: %v", err)
	}
	if _, err := e.app.Orders.End(ctx, 1<<50); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("end of no product: %v", err)
	}
}

// TestPausedPurchases: every strategy, and bundles, refuse a paused product sale_paused, and
// sell it again once resumed.
func TestPausedPurchases(t *testing.T) {
	e := newEnv(t, order.Config{})
	ctx := context.Background()
	for _, s := range inventory.Strategies {
		p := e.product(t, 5, s, 0)
		if _, err := e.app.Orders.Pause(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.app.Orders.Purchase(ctx, p.ID, 1)
		var pe *inventory.PausedError
		if !errors.As(err, &pe) || order.Outcome(err) != order.OutcomePaused {
			t.Fatalf("%s paused: %v", s, err)
		}
		if s == inventory.StrategyDlock {
			if _, err := e.app.Orders.PurchaseBundle(ctx, []int64{p.ID}, 1); !errors.Is(err, inventory.ErrPaused) {
				t.Fatalf("bundle of a paused product: %v", err)
			}
		}
		if _, err := e.app.Orders.Resume(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil && !errors.Is(err, order.ErrAccepted) {
			t.Fatalf("%s resumed: %v", s, err)
		}
		waitOrders(t, e, p.ID, 1)
		e.wantAudit(t, p.ID, 1, 4)
	}
	if _, err := e.app.Orders.Pause(ctx, 1<<50); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("pause of no product: %v", err)
	}
}
