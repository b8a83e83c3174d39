package inventory_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// marks is what the lift tests need of a sold-out fast path: SoldOut, or the old design.
type marks interface {
	Is(id int64) bool
	Mark(ctx context.Context, id int64)
	Lift(ctx context.Context, id int64) error
}

// testLease is the tests' lease: long enough that a mark just made is still trusted on a
// loaded machine, short enough that the tests wait little.
const testLease = 300 * time.Millisecond

// process is one API process's SoldOut on a Redis client of its own.
func process(t *testing.T, addr string, store *inventory.Store, keys inventory.Keys) *inventory.SoldOut {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return inventory.NewSoldOut(rdb, store, keys, slog.New(slog.DiscardHandler),
		inventory.SoldOutOptions{Lease: testLease, Hold: 3 * time.Second})
}

// run runs fn until the test ends.
func run(t *testing.T, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); fn(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// markedEverywhere marks product id in each process until all of them trust it (each has
// seen the stock at 0 in PostgreSQL, as a buyer answered sold out there would have).
func markedEverywhere(t *testing.T, id int64, ps ...marks) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ps {
		for !p.Is(id) {
			if time.Now().After(deadline) {
				t.Fatalf("product %d never marked sold out", id)
			}
			p.Mark(context.Background(), id)
			time.Sleep(testLease / 10)
		}
	}
}

// liftViolations marks product id (stock 0 in PostgreSQL) in a and b, lifts it in a, puts
// its unit back in PostgreSQL as the lifter would, and then, for three leases, asks a and b
// whether it is sold out, while b keeps trying to mark it again if remark (from its stale
// view of the stock: once before the unit is back, then after). It returns the checks that said sold out: each is a lie, since every one
// started after Lift returned, with the unit back or on its way.
func liftViolations(t *testing.T, id int64, back func(), a, b marks, remark bool) []string {
	t.Helper()
	markedEverywhere(t, id, a, b)
	if err := a.Lift(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	var lies []string
	check := func(when string) {
		for name, p := range map[string]marks{"lifter": a, "other": b} {
			if p.Is(id) {
				lies = append(lies, name+" says sold out "+when)
			}
		}
	}
	check("right after Lift returned")
	if remark { // from the stock it saw at 0, before the unit is back: the hold refuses it
		b.Mark(context.Background(), id)
	}
	back()
	for end := time.Now().Add(3 * testLease); time.Now().Before(end); time.Sleep(testLease / 20) {
		if remark {
			b.Mark(context.Background(), id)
		}
		check("after the unit came back")
	}
	return lies
}

// TestLiftReachesEveryProcess: once Lift returns nil in one process, another process on its
// own Redis client answers no check of Is from its mark, whether it hears the lift on
// pub/sub, misses it (its subscription cut, its marks still kept), or is not running its
// listener at all (slow to read); and it cannot mark the product again from the stock it saw
// before the unit came back. The negative control is the old design, marks shared by pub/sub
// alone: when the other process misses the message, it goes on saying sold out.
func TestLiftReachesEveryProcess(t *testing.T) {
	t.Parallel()
	addr := testenv.RedisAddr(t)
	for _, tt := range []struct {
		name   string
		listen func(t *testing.T, b *inventory.SoldOut)
	}{
		{"heard", func(t *testing.T, b *inventory.SoldOut) { run(t, b.Listen) }},
		{"message lost", func(t *testing.T, b *inventory.SoldOut) { run(t, b.Keep) }},
		{"not listening", func(*testing.T, *inventory.SoldOut) {}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, prefix := testenv.Redis(t)
			keys := inventory.Keys{Prefix: prefix}
			p, store, tx := createProduct(t, inventory.NewProduct{Name: "p", Stock: 1})
			if err := tx.Exec(`UPDATE products SET stock = 0 WHERE id = ?`, p.ID).Error; err != nil { // sold
				t.Fatal(err)
			}
			a, b := process(t, addr, store, keys), process(t, addr, store, keys)
			run(t, a.Listen)
			tt.listen(t, b)
			back := func() {
				if err := tx.Exec(`UPDATE products SET stock = stock + 1 WHERE id = ?`, p.ID).Error; err != nil {
					t.Fatal(err)
				}
			}
			if lies := liftViolations(t, p.ID, back, a, b, true); len(lies) > 0 {
				t.Errorf("%d checks answered sold out after the lift, first: %s", len(lies), lies[0])
			}
		})
	}
	t.Run("negative control: pub/sub alone, message lost", func(t *testing.T) {
		t.Parallel()
		rdb, prefix := testenv.Redis(t)
		keys := inventory.Keys{Prefix: prefix}
		a, b := &pubSubMarks{rdb: rdb, keys: keys}, &pubSubMarks{rdb: rdb, keys: keys}
		run(t, a.Listen) // b's subscription is cut: it hears nothing
		if lies := liftViolations(t, 1, func() {}, a, b, false); len(lies) == 0 {
			t.Error("the old design answered no check sold out after the lift: the test cannot see a lost lift")
		}
	})
}

// TestLiftWithRedisDown: a lifter cut off from Redis gets an error from Lift (and keeps its
// unit); a process cut off from Redis stops trusting its marks within a lease, so that what
// it cannot hear of cannot make it lie.
func TestLiftWithRedisDown(t *testing.T) {
	t.Parallel()
	_, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	p, store, _ := createProduct(t, inventory.NewProduct{Name: "p", Stock: 0})
	proxyA := faultproxy.New(t, "", testenv.RedisAddr(t))
	proxyB := faultproxy.New(t, "", testenv.RedisAddr(t))
	a, b := process(t, proxyA.Addr(), store, keys), process(t, proxyB.Addr(), store, keys)
	run(t, a.Listen)
	run(t, b.Listen)
	markedEverywhere(t, p.ID, a, b)

	proxyA.Down()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Lift(ctx, p.ID); err == nil {
		t.Error("Lift with Redis down returned nil")
	}

	proxyB.Stall() // a silent partition: no answer, no reset
	cut := time.Now()
	time.Sleep(testLease + testLease/10 + 5*time.Millisecond) // the lease: a correctness bound
	if b.Is(p.ID) {
		t.Errorf("a process cut off from Redis %s ago still trusts its mark", time.Since(cut))
	}
}

// TestMarkChecksPostgres: a Mark made when PostgreSQL has stock (a buyer who saw 0 before a
// unit came back) marks nothing, here or anywhere.
func TestMarkChecksPostgres(t *testing.T) {
	t.Parallel()
	_, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	p, store, _ := createProduct(t, inventory.NewProduct{Name: "p", Stock: 1})
	a, b := process(t, testenv.RedisAddr(t), store, keys), process(t, testenv.RedisAddr(t), store, keys)
	run(t, b.Listen)
	a.Mark(context.Background(), p.ID)
	time.Sleep(testLease / 2)
	if a.Is(p.ID) || b.Is(p.ID) {
		t.Errorf("product with stock marked sold out: here %v, elsewhere %v", a.Is(p.ID), b.Is(p.ID))
	}
}

// TestMarkOfAnotherDataSet: a mark Redis holds from another data set (restored from a
// snapshot, or a replica's copy after a failover) is never trusted, and no mark is made for
// the hold after, since a lift may have been lost with what Redis forgot.
func TestMarkOfAnotherDataSet(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	p, store, _ := createProduct(t, inventory.NewProduct{Name: "p", Stock: 0})
	a := process(t, testenv.RedisAddr(t), store, keys)
	run(t, a.Listen)
	markedEverywhere(t, p.ID, a)
	ctx := context.Background()
	// What a restart from an older snapshot leaves: the mark, and the ident, of the old run.
	old := "m:0000/0000:old"
	if err := rdb.MSet(ctx, keys.SoldOut(p.ID), old, keys.SoldOutIdent(p.ID), "0000/0000").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(testLease + testLease/10 + 5*time.Millisecond)
	if a.Is(p.ID) {
		t.Error("a mark of another data set is trusted")
	}
	a.Mark(ctx, p.ID)
	if a.Is(p.ID) {
		t.Error("marked again within the hold after a new data set")
	}
	if ttl := rdb.PTTL(ctx, keys.SoldOutHold(p.ID)).Val(); ttl <= 0 {
		t.Errorf("hold after a new data set: PTTL %s, want a hold", ttl)
	}
}

// BenchmarkSoldOutIs is the sold-out fast path's own check: a map load and a read of the
// monotonic clock, from parallel goroutines, of a product marked and kept. /final is the check
// before marks could be lifted, a map load alone (the old SoldOut.Is), in the same run.
func BenchmarkSoldOutIs(b *testing.B) {
	b.Run("final", func(b *testing.B) {
		var local sync.Map
		local.Store(int64(1), struct{}{})
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, ok := local.Load(int64(1)); !ok {
					b.Error("not marked")
					return
				}
			}
		})
	})
	b.Run("lease", benchSoldOutIsLease)
}

func benchSoldOutIsLease(b *testing.B) {
	_, prefix := testenv.Redis(b)
	gdb := testenv.Postgres(b)
	store := inventory.NewStore(gdb)
	p, err := store.Create(context.Background(), inventory.NewProduct{Name: "p", Stock: 0})
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(b)})
	b.Cleanup(func() { rdb.Close() })
	s := inventory.NewSoldOut(rdb, store, inventory.Keys{Prefix: prefix}, slog.New(slog.DiscardHandler), inventory.SoldOutOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Keep(ctx)
	for !s.Is(p.ID) {
		s.Mark(ctx, p.ID)
		time.Sleep(10 * time.Millisecond)
	}
	var misses atomic.Int64 // checks that found the lease run out (Keep late): reported, not failed
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !s.Is(p.ID) {
				misses.Add(1)
			}
		}
	})
	b.ReportMetric(float64(misses.Load())/float64(b.N), "misses/op")
}
