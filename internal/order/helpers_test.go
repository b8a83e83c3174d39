package order_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/labapi"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// env is one API process of a test, on a PostgreSQL schema and a Redis key prefix of the
// test's own.
type env struct {
	db     *gorm.DB
	rdb    *redis.Client
	prefix string
	app    *app.App
	store  *inventory.Store
}

// newEnv starts an app with cfg on a fresh schema and key prefix, closed when the test ends.
func newEnv(t *testing.T, cfg order.Config) *env {
	t.Helper()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	a := app.New(app.Config{Plug: teaching, DB: gdb, Redis: rdb, RedisPrefix: prefix, Order: cfg})
	t.Cleanup(func() { a.Close() })
	return &env{db: gdb, rdb: rdb, prefix: prefix, app: a, store: labStore(gdb)}
}

// product creates a product with stock units sold by strategy s, thinking thinkMS per purchase.
func (e *env) product(t *testing.T, stock int, s inventory.Strategy, thinkMS int) inventory.Product {
	t.Helper()
	p, err := e.store.Create(context.Background(), inventory.NewProduct{Name: "p", Stock: stock, Strategy: s, ThinkMS: thinkMS})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// audit returns the app's audit of product id.
func (e *env) audit(t *testing.T, id int64) order.Audit {
	t.Helper()
	a, err := e.app.Orders.Audit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// wantAudit fails the test unless the audit of product id finds orders orders, stock units
// left, and the sale consistent (Redis agreeing, for the strategies that use it).
func (e *env) wantAudit(t *testing.T, id int64, orders, stock int) {
	t.Helper()
	if a := e.audit(t, id); a.Orders != orders || a.Stock != stock || !a.Consistent {
		t.Fatalf("audit = %+v (redis %+v), want %d orders, %d left, consistent", a, a.Redis, orders, stock)
	}
}

// hasOrder reports whether user has an order of product id in PostgreSQL.
func (e *env) hasOrder(t *testing.T, id, user int64) bool {
	t.Helper()
	var n int64
	if err := e.db.Raw(`SELECT count(*) FROM orders WHERE product_id = ? AND user_id = ?`, id, user).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// checkAnswers fails the test for each of users whose outcome (outcomes[i] is users[i]'s)
// disagrees with PostgreSQL: a buyer has an order of product id if and only if it was
// answered bought.
func (e *env) checkAnswers(t *testing.T, id int64, users []int64, outcomes []string) {
	t.Helper()
	for i, u := range users {
		if has := e.hasOrder(t, id, u); has != (outcomes[i] == order.OutcomeBought) {
			t.Errorf("user %d answered %s, has an order: %v", u, outcomes[i], has)
		}
	}
}

// process is what newService wires another API process's Service with besides e's database
// and key prefix. Its zero value means e's Redis client, a discarded log and no Observer.
type process struct {
	rdb redis.UniversalClient // its own Redis client
	log io.Writer             // where its JSON log goes
	obs order.Observer
}

// newService wires another API process's Service by hand on e's database and key prefix,
// for Redis clients, logs, observers and pools the app does not use.
func newService(t *testing.T, e *env, p process, cfg order.Config) *order.Service {
	t.Helper()
	if p.rdb == nil {
		p.rdb = e.rdb
	}
	logger := slog.New(slog.DiscardHandler)
	if p.log != nil {
		logger = slog.New(slog.NewJSONHandler(p.log, nil))
	}
	keys := inventory.Keys{Prefix: e.prefix}
	locks := dlock.New(p.rdb, nil)
	t.Cleanup(func() { locks.Close() })
	store := labStore(e.db)
	svc := order.NewService(order.Deps{
		Products: store, Locks: locks, Gate: inventory.NewGate(p.rdb, keys), Queue: inventory.NewQueue(p.rdb, keys),
		SoldOut: inventory.NewSoldOut(p.rdb, store, keys, logger, inventory.SoldOutOptions{}), Keys: keys, Logger: logger, Observer: p.obs,
		Think: labapi.Thinker{},
	}, cfg)
	t.Cleanup(svc.Close) // its queue consumers, if a purchase started any
	return svc
}

// writeOrders writes the orders of users first to last of product id straight into
// PostgreSQL and takes their units, as purchases that committed unseen by Redis would.
func writeOrders(t testing.TB, gdb *gorm.DB, id, first, last int64) {
	t.Helper()
	mustExec(t, gdb, `WITH o AS (INSERT INTO orders (product_id, user_id) SELECT ?, g FROM generate_series(?::bigint, ?::bigint) g)
		UPDATE products SET stock = stock - ? WHERE id = ?`, id, first, last, last-first+1, id)
}

// mustExec runs sql in gdb, failing the test if it fails.
func mustExec(t testing.TB, gdb *gorm.DB, sql string, args ...any) {
	t.Helper()
	if err := gdb.Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}

// buyAll sends one purchase of product id to s per entry of users at once and returns the
// outcome of each.
func buyAll(s *order.Service, id int64, users []int64) []string {
	out := make([]string, len(users))
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Purchase(context.Background(), id, u)
			out[i] = order.Outcome(err)
		}()
	}
	wg.Wait()
	return out
}

// count returns how many of outcomes are want.
func count(outcomes []string, want string) int {
	n := 0
	for _, o := range outcomes {
		if o == want {
			n++
		}
	}
	return n
}

// goPurchase starts user's purchase of product id on s and returns the channel its error
// will come on.
func goPurchase(ctx context.Context, s *order.Service, id, user int64) <-chan error {
	errc := make(chan error, 1)
	go func() { _, err := s.Purchase(ctx, id, user); errc <- err }()
	return errc
}

// flushPrefix deletes every Redis key under prefix, as a restart without persistence would.
func flushPrefix(t *testing.T, rdb *redis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		rdb.Del(ctx, keys...)
	}
}

// teaching is the app.Config.Plug of the lab build (internal/labapi), which the tests' API
// processes are: naive, lab and think_ms.
var teaching = labapi.Plug(labapi.Options{})

// labStore is a product store on gdb that sells what the lab build's does: the teaching
// strategies and think_ms too.
func labStore(gdb *gorm.DB) *inventory.Store {
	s := inventory.NewStore(gdb)
	s.Plug(labapi.Naive, nil)
	s.Plug(labapi.Lab, func(np inventory.NewProduct) error { return lab.Check(np.LabLock, np.LeaseMS) })
	s.AllowThink()
	return s
}
