package order_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestQueueErrorReply: a redis-server of the test's own answers the queue strategy's script
// with an error reply, made for real: OOM (maxmemory 1 byte, noeviction) and READONLY (it
// became a replica). Redis refuses such a script before its first write, so the purchase is
// unavailable (503 unavailable), not outcome_unknown; the buyer is not admitted, and buys once
// the fault is lifted. A reply lost after the script ran (the connection cut while a proxy
// holds the reply) stays outcome_unknown, and that purchase is written.
func TestQueueErrorReply(t *testing.T) {
	t.Parallel()
	red := servers.StartRedis(t)
	px := testenv.StableProxy(t, red.Addr) // brought up again on its port
	e := ownRedisEnv(t, px.Addr())
	p := e.product(t, 10, inventory.StrategyQueue, 0)
	ctx := context.Background()
	admin := red.Client()
	admitted := func(user int64) bool {
		return admin.SIsMember(ctx, inventory.Keys{Prefix: e.prefix}.GateBuyers(p.ID), user).Val()
	}
	bought := func(user int64) {
		t.Helper()
		if _, err := e.app.Orders.Purchase(ctx, p.ID, user); err != nil && !errors.Is(err, order.ErrAccepted) {
			t.Fatalf("user %d's purchase with Redis well = %v", user, err)
		}
	}
	bought(1) // seeds the gate

	faults := []struct {
		reply string
		make  func(t testing.TB) *servers.RedisFault
	}{
		{"OOM", red.OutOfMemory},
		{"READONLY", func(t testing.TB) *servers.RedisFault { return red.ReplicaOfSilentMaster(t, true) }},
	}
	for i, f := range faults {
		user := int64(2 + i)
		fault := f.make(t)
		_, err := e.app.Orders.Purchase(ctx, p.ID, user)
		if errors.Is(err, order.ErrOutcomeUnknown) && strings.Contains(err.Error(), "EOF") && !admitted(user) {
			// The pooled connection the fault's making closed (once seen, on a loaded
			// machine, as the server became a replica): nothing ran; the buyer retries.
			t.Logf("%s: the first try met a closed connection (%v); retried", f.reply, err)
			_, err = e.app.Orders.Purchase(ctx, p.ID, user)
		}
		fault.Lift(t)
		if err == nil || !strings.Contains(err.Error(), f.reply+" ") {
			t.Fatalf("%s: purchase = %v, want the %s reply", f.reply, err, f.reply)
		}
		if got := order.Outcome(err); got != order.OutcomeUnavailable || !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("%s: purchase answered %s (%v), want %s", f.reply, got, err, order.OutcomeUnavailable)
		}
		if admitted(user) {
			t.Errorf("%s: user %d, refused, is admitted in Redis", f.reply, user)
		}
		bought(user)
	}

	// A lost reply: the script runs, its reply is held, and the connection is cut.
	const lost = 9
	px.SetReplyLatency(2 * time.Second)
	errc := goPurchase(ctx, e.app.Orders, p.ID, lost)
	testenv.Eventually(t, 5*time.Second, "the script to admit the buyer", func() bool { return admitted(lost) })
	px.Down()
	err := <-errc
	px.SetReplyLatency(0)
	px.Up(t)
	if got := order.Outcome(err); got != order.OutcomeUnknown {
		t.Errorf("purchase whose reply was lost answered %s (%v), want %s", got, err, order.OutcomeUnknown)
	}
	waitOrder(t, e, p.ID, lost)
	if a := drained(t, e, p.ID); a.Orders != 4 || !a.Consistent {
		t.Fatalf("audit %+v, queue %+v; want 4 orders, consistent", a, a.Queue)
	}
}

// ownRedisEnv is newEnv on the Redis at addr, with a client set as cmd/api's is: it retries
// a command once. The enqueue script is sent at most once all the same (inventory's onceCmd):
// after a reply lost on a cut connection, a retry refused a connection would otherwise be the
// error go-redis reports, and a purchase whose script ran would be answered unavailable.
func ownRedisEnv(t *testing.T, addr string, readTimeout ...time.Duration) *env {
	t.Helper()
	gdb := testenv.Postgres(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: 1,
		DialerRetries: 1, DialTimeout: time.Second, ReadTimeout: append(readTimeout, 0)[0]})
	t.Cleanup(func() { rdb.Close() })
	prefix := testenv.Name("t")
	a := app.New(app.Config{Plug: teaching, DB: gdb, Redis: rdb, RedisPrefix: prefix})
	t.Cleanup(func() { a.Close() })
	return &env{db: gdb, rdb: rdb, prefix: prefix, app: a, store: inventory.NewStore(gdb)}
}

// TestQueueMarkFailsUnavailable: the queue product's mark in the registry of live queue
// products (sent before the purchase's script) gets no answer in time: nothing was queued,
// so the purchase is 503 unavailable, not outcome_unknown, and the buyer is not admitted.
func TestQueueMarkFailsUnavailable(t *testing.T) {
	t.Parallel()
	red := servers.StartRedis(t)
	px := testenv.StableProxy(t, red.Addr)
	e := ownRedisEnv(t, px.Addr(), 200*time.Millisecond)
	p := e.product(t, 10, inventory.StrategyQueue, 0) // never bought: its first purchase marks it
	px.SetReplyLatency(time.Second)
	_, err := e.app.Orders.Purchase(context.Background(), p.ID, 1)
	px.SetReplyLatency(0)
	if got := order.Outcome(err); got != order.OutcomeUnavailable {
		t.Errorf("purchase whose mark got no answer = %s (%v), want %s", got, err, order.OutcomeUnavailable)
	}
	if red.Client().SIsMember(context.Background(), inventory.Keys{Prefix: e.prefix}.GateBuyers(p.ID), 1).Val() {
		t.Error("the buyer is admitted")
	}
}
