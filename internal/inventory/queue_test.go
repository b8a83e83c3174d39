package inventory_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// TestQueueClaimAndDeadLetter: an entry a consumer keeps touching is not claimed by another;
// once it has been idle long enough it is, and after the claimer acknowledged it (the order
// written), the first consumer's dead-lettering leaves it alone: no unit is given back for a
// buyer who has an order.
func TestQueueClaimAndDeadLetter(t *testing.T) {
	t.Parallel()
	_, rdb, keys := seededGate(t, 2)
	q := inventory.NewQueue(rdb, keys)
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, 1, 7); err != nil {
		t.Fatal(err)
	}
	if err := q.EnsureGroup(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := q.Read(ctx, 1, "a", 10, 0)
	if err != nil || len(held) != 1 {
		t.Fatalf("read by a = %v, %v", held, err)
	}
	time.Sleep(60 * time.Millisecond)
	if err := q.Touch(ctx, 1, "a", held); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Claim(ctx, 1, "b", 50*time.Millisecond, 10); err != nil || len(got) != 0 {
		t.Fatalf("claim of a touched entry = %v, %v; want nothing", got, err)
	}
	time.Sleep(60 * time.Millisecond)
	claimed, err := q.Claim(ctx, 1, "b", 50*time.Millisecond, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim of an idle entry = %v, %v", claimed, err)
	}
	if err := q.Ack(ctx, 1, claimed); err != nil {
		t.Fatal(err)
	}
	moved, err := q.DeadLetter(ctx, 1, held, "failed", true)
	if err != nil || len(moved) != 0 {
		t.Fatalf("dead-letter of an entry another consumer settled = %v, %v; want none moved", moved, err)
	}
	if s, _ := q.State(ctx, 1); s.Stock != 1 || s.Buyers != 1 || s.Queued != 0 || s.Dead != 0 {
		t.Fatalf("queue = %+v, want stock 1, buyer 7, nothing queued or dead", s)
	}
}
