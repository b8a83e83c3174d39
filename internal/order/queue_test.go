package order_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// waitOrder waits up to 10 s for user's order of product id to be written.
func waitOrder(t *testing.T, e *env, id, user int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !e.hasOrder(t, id, user); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("user %d's queued purchase of product %d not written after 10s", user, id)
		}
	}
}

// drained waits up to 10 s for product id's stream to be empty and returns the audit.
func drained(t *testing.T, e *env, id int64) order.Audit {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		a := e.audit(t, id)
		if a.Queue != nil && a.Queue.Queued == 0 {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("product %d's stream not drained after 10s: %+v", id, a.Queue)
		}
	}
}

// TestQueueCrowd: more buyers than stock at once; each is answered with its order (or
// ErrAccepted, then written), or sold out; once the stream is drained every admitted buyer
// has an order, and Redis agrees with PostgreSQL.
func TestQueueCrowd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.product(t, 20, inventory.StrategyQueue, 0)
	users := make([]int64, 60)
	for i := range users {
		users[i] = int64(i + 1)
	}
	outcomes := buyAll(e.app.Orders, p.ID, users)
	a := drained(t, e, p.ID)
	admitted := 0
	for i, o := range outcomes {
		switch o {
		case order.OutcomeBought, order.OutcomeAccepted:
			admitted++
			if !e.hasOrder(t, p.ID, int64(i+1)) {
				t.Errorf("user %d answered %s has no order", i+1, o)
			}
		case order.OutcomeSoldOut:
			if e.hasOrder(t, p.ID, int64(i+1)) {
				t.Errorf("user %d answered sold out has an order", i+1)
			}
		default:
			t.Errorf("user %d: outcome %s", i+1, o)
		}
	}
	if admitted != 20 || a.Orders != 20 || !a.Consistent || a.Queue.Dead != 0 {
		t.Fatalf("admitted %d; audit %+v, queue %+v; want 20 orders, consistent", admitted, a, a.Queue)
	}
}

// TestQueueAccepted: a purchase not written within QueueWait (think_ms is taken by the
// consumer) is ErrAccepted; the order is written later, and the buyer asking again is told
// it is still queued, then that it has its order.
func TestQueueAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{QueueWait: 50 * time.Millisecond})
	p := e.product(t, 3, inventory.StrategyQueue, 600)
	ctx := context.Background()
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); !errors.Is(err, order.ErrAccepted) {
		t.Fatalf("purchase = %v, want ErrAccepted", err)
	}
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); !errors.Is(err, order.ErrAccepted) {
		t.Fatalf("the same buyer again, still queued = %v, want ErrAccepted", err)
	}
	if _, err := e.app.Orders.OrderOf(ctx, p.ID, 1); !errors.Is(err, order.ErrOrderNotFound) {
		t.Fatalf("order lookup while queued = %v, want ErrOrderNotFound", err)
	}
	waitOrder(t, e, p.ID, 1)
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); !errors.Is(err, order.ErrAlreadyPurchased) {
		t.Fatalf("the same buyer once written = %v, want ErrAlreadyPurchased", err)
	}
	if a := drained(t, e, p.ID); a.Orders != 1 || !a.Consistent {
		t.Fatalf("audit %+v, queue %+v", a, a.Queue)
	}
}

// TestQueueDeadLetter: a batch whose write keeps failing (a trigger refuses the product's
// orders: not an outage) is dead-lettered after QueueAttempts, its unit goes back, the buyer
// is told busy, and the audit shows it; once the fault is gone the buyer buys.
func TestQueueDeadLetter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{QueueWait: 5 * time.Second, QueueAttempts: 2})
	p := e.product(t, 3, inventory.StrategyQueue, 0)
	ctx := context.Background()
	mustExec(t, e.db, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'orders refused by the test'; END $$`)
	mustExec(t, e.db, `CREATE TRIGGER refuse BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION refuse()`)
	_, err := e.app.Orders.Purchase(ctx, p.ID, 1)
	if !errors.Is(err, order.ErrBusy) {
		t.Fatalf("purchase whose write keeps failing = %v, want ErrBusy", err)
	}
	a := drained(t, e, p.ID)
	if a.Queue.Dead != 1 || a.Queue.Stock != 3 || a.Queue.Buyers != 0 || a.Consistent {
		t.Fatalf("audit %+v, queue %+v; want one dead letter, its unit back, not consistent", a, a.Queue)
	}
	rec := httptest.NewRecorder()
	e.app.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `seckill_queue_dead_lettered_total{reason="failed"} 1`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	mustExec(t, e.db, `DROP TRIGGER refuse ON orders`)
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil {
		t.Fatalf("purchase once the fault is gone = %v", err)
	}
}

// TestQueueClaim: purchases read by a consumer that never acknowledges them (a process
// killed after reading) are claimed by another process's consumer once they have been idle
// QueueClaimIdle, and written once.
func TestQueueClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{QueueClaimIdle: 300 * time.Millisecond})
	p := e.product(t, 5, inventory.StrategyQueue, 0)
	ctx := context.Background()
	q := e.app.Queue
	if _, err := e.app.Gate.StartSeeding(p.ID).Publish(ctx, inventory.SeedInit, 5); err != nil {
		t.Fatal(err)
	}
	for _, u := range []int64{1, 2} {
		if _, err := q.Enqueue(ctx, p.ID, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.EnsureGroup(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Read(ctx, p.ID, "killed", 10, 0); err != nil || len(got) != 2 {
		t.Fatalf("read by the consumer to be killed = %v, %v", got, err)
	}
	if err := e.app.Orders.StartQueues(ctx); err != nil {
		t.Fatal(err)
	}
	waitOrder(t, e, p.ID, 1)
	waitOrder(t, e, p.ID, 2)
	if a := drained(t, e, p.ID); a.Orders != 2 || !a.Consistent {
		t.Fatalf("audit %+v, queue %+v", a, a.Queue)
	}
}

// TestQueueRepeatWhileQueued: a buyer who asks again while its first purchase is queued (a
// retry, a double click) waits for that purchase too: one request gets the order, the other
// ErrAlreadyPurchased with the same order, not 202 (each of its requests gets the word).
func TestQueueRepeatWhileQueued(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{QueueWait: 5 * time.Second})
	p := e.product(t, 3, inventory.StrategyQueue, 300)
	type answer struct {
		o   order.Order
		err error
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			o, err := e.app.Orders.Purchase(context.Background(), p.ID, 1)
			answers <- answer{o, err}
		}()
	}
	a, b := <-answers, <-answers
	if b.err == nil {
		a, b = b, a
	}
	var had *order.PurchasedError
	if a.err != nil || !errors.As(b.err, &had) || had.Order.ID != a.o.ID {
		t.Fatalf("answers %v / %v, want the order and already purchased with the same order", a, b)
	}
}
