package inventory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestGateStampedDataSet: a redis-server of the test's own comes back from a snapshot taken
// while the gate was sold out, having forgotten a unit given back since (order 100 of user 7):
// the gate says stock 0, but its sold out is not answered (ErrGateUnverified, for the redis
// and the queue strategies' admissions), since it was stamped in another data set. Recover
// redoes the return (once however often it runs), and not one of an order whose purchase the
// gate never saw (order 101 of user 9: its buyer is not counted); the stamp then makes the
// gate's sold out an answer again. Recover and Stamp write nothing into a data set other than
// the one they verify. Controls: the same gate before the restart answers sold out; one whose
// stamp is gone does not.
func TestGateStampedDataSet(t *testing.T) {
	t.Parallel()
	srv := servers.StartRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	keys := inventory.Keys{Prefix: testenv.Name("t")}
	g, q := inventory.NewGate(rdb, keys), inventory.NewQueue(rdb, keys)
	ctx := context.Background()
	if _, err := g.StartSeeding(1).Publish(ctx, inventory.SeedInit, 2); err != nil {
		t.Fatal(err)
	}
	for _, u := range []int64{7, 8} {
		if err := g.Admit(ctx, 1, u, "t", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Confirm(ctx, 1, u); err != nil {
			t.Fatal(err)
		}
	}
	soldOut := func(want error) {
		t.Helper()
		if err := g.Admit(ctx, 1, 10, "x", time.Minute); !errors.Is(err, want) {
			t.Fatalf("admit on a gate with no unit = %v, want %v", err, want)
		}
		if _, err := q.Enqueue(ctx, 1, 10); !errors.Is(err, want) {
			t.Fatalf("enqueue on a gate with no unit = %v, want %v", err, want)
		}
	}
	soldOut(inventory.ErrSoldOut) // control: stamped in this data set
	srv.Snapshot(t)
	if n, err := g.Return(ctx, 1, []inventory.Ended{{Order: 100, User: 7}}); err != nil || n != 1 {
		t.Fatalf("return = %d, %v", n, err)
	}
	srv.Stop()
	srv.Start()

	st, err := g.State(ctx, 1)
	if err != nil || st.Stock != 0 || st.Buyers != 2 {
		t.Fatalf("gate after the restart = %+v, %v; want the snapshot's: stock 0, 2 buyers", st, err)
	}
	soldOut(inventory.ErrGateUnverified)
	v, err := g.Verification(ctx, 1)
	if err != nil || v.Current() || !v.Seeded || v.Stamped == "" || v.Stamped == v.DataSet || v.StampedAt.IsZero() {
		t.Fatalf("verification after the restart = %+v, %v; want a gate stamped in another data set", v, err)
	}
	if _, err := g.Recover(ctx, 1, v.Stamped, []inventory.Ended{{Order: 100, User: 7}}); !errors.Is(err, inventory.ErrDataSetChanged) {
		t.Fatalf("recover in the data set of the stamp = %v, want ErrDataSetChanged", err)
	}
	if err := g.Stamp(ctx, 1, v.Stamped, time.Now()); !errors.Is(err, inventory.ErrDataSetChanged) {
		t.Fatalf("stamp in the data set of the stamp = %v, want ErrDataSetChanged", err)
	}
	ended := []inventory.Ended{{Order: 100, User: 7}, {Order: 101, User: 9}}
	for i, want := range []int{1, 0} {
		if n, err := g.Recover(ctx, 1, v.DataSet, ended); err != nil || n != want {
			t.Fatalf("recover #%d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	if st, err := g.State(ctx, 1); err != nil || st.Stock != 1 || st.Buyers != 1 {
		t.Fatalf("gate after the recovery = %+v, %v; want stock 1, 1 buyer", st, err)
	}
	if err := g.Stamp(ctx, 1, v.DataSet, time.Now()); err != nil {
		t.Fatal(err)
	}
	if v, err := g.Verification(ctx, 1); err != nil || !v.Current() {
		t.Fatalf("verification after the stamp = %+v, %v", v, err)
	}
	if err := g.Admit(ctx, 1, 7, "again", time.Minute); err != nil {
		t.Fatalf("user 7, whose unit came back, buys again: %v", err)
	}
	if _, err := g.Confirm(ctx, 1, 7); err != nil {
		t.Fatal(err)
	}
	soldOut(inventory.ErrSoldOut)
	if err := rdb.Del(ctx, keys.GateStamp(1)).Err(); err != nil {
		t.Fatal(err)
	}
	soldOut(inventory.ErrGateUnverified) // control: a gate never stamped
}
