package order

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestQueueBatchWrittenAgainAfterItsReservationEnded: a consumer commits a batch and stops
// before acknowledging it (killed, or frozen past QueueClaimIdle); the buyer cancels the
// reservation, its unit going back; then another process's consumer claims the batch and
// writes it again. That write must find the entry written and sell nothing: one order,
// cancelled, the stock whole, the stream drained, no dead letter, Redis and PostgreSQL
// agreeing. The negative control makes the first write as it was made before
// 00006_queue_entry.sql, without its entry: the claim then sells the buyer a second unit
// (what TestReservationKillAndPauseMidSweep, internal/chaos, caught), which this test sees.
func TestQueueBatchWrittenAgainAfterItsReservationEnded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		record bool // the first write records its entry
		orders int  // the buyer's orders in the end
	}{
		{"entry recorded", true, 1},
		{"negative control: entry not recorded", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gdb := testenv.Postgres(t)
			rdb, prefix := testenv.Redis(t)
			store := inventory.NewStore(gdb)
			keys := inventory.Keys{Prefix: prefix}
			log := slog.New(slog.DiscardHandler)
			queue := inventory.NewQueue(rdb, keys)
			s := NewService(Deps{Products: store, Locks: dlock.New(rdb, nil), Gate: inventory.NewGate(rdb, keys), Queue: queue,
				SoldOut: inventory.NewSoldOut(rdb, store, keys, log, inventory.SoldOutOptions{}), Keys: keys, Logger: log},
				Config{QueueClaimIdle: 300 * time.Millisecond, SweepInterval: -1})
			t.Cleanup(s.Close)
			ctx := context.Background()
			p, err := store.Create(ctx, inventory.NewProduct{Name: "q", Stock: 2, Strategy: inventory.StrategyQueue, PayWithinMS: 3_600_000})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.gate.StartSeeding(p.ID).Publish(ctx, inventory.SeedInit, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := queue.Enqueue(ctx, p.ID, 1); err != nil {
				t.Fatal(err)
			}
			if err := queue.EnsureGroup(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			entries, err := queue.Read(ctx, p.ID, "stopped", 10, 0)
			if err != nil || len(entries) != 1 {
				t.Fatalf("read by the consumer that stops: %v, %v", entries, err)
			}
			ids := []string{entries[0].ID}
			if !tc.record {
				ids = nil
			}
			// The stopped consumer's write: committed, never acknowledged.
			if rs, _, err := s.queued.writeBatch(ctx, p, []int64{1}, ids, 0); err != nil || rs[0].err != nil {
				t.Fatalf("first write: %v, %+v", err, rs)
			}
			if o, err := s.Cancel(ctx, p.ID, 1); err != nil || o.Status != StatusCancelled {
				t.Fatalf("cancel: %+v, %v", o, err)
			}
			if err := s.StartQueues(ctx); err != nil { // claims the batch once it has idled 300 ms
				t.Fatal(err)
			}
			var a Audit
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if a, err = s.Audit(ctx, p.ID); err != nil {
					t.Fatal(err)
				}
				if a.Queue != nil && a.Queue.Queued == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the batch was not written again in 10 s: %+v", a.Queue)
				}
			}
			var orders int
			if err := gdb.Raw(`SELECT count(*) FROM orders WHERE product_id = ? AND user_id = 1`, p.ID).Scan(&orders).Error; err != nil {
				t.Fatal(err)
			}
			if orders != tc.orders {
				t.Fatalf("user 1 has %d orders, want %d (audit %+v, queue %+v)", orders, tc.orders, a, a.Queue)
			}
			if tc.record && (a.Stock != 2 || a.Orders != 0 || a.Queue.Dead != 0 || !a.Consistent) {
				t.Fatalf("audit %+v, queue %+v: want the stock whole, no live order, no dead letter, consistent", a, a.Queue)
			}
		})
	}
}
