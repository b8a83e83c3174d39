package order_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/labapi"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// recordedEnv is newEnv with the lock history on, in a file of the test's; ops reads it.
func recordedEnv(t *testing.T, cfg order.Config) (*env, func() []history.LockOp) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.jsonl")
	f, err := history.CreateLockFile(path, "api1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	a := app.New(app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, Order: cfg, Plug: labapi.Plug(labapi.Options{LockHistory: f})})
	t.Cleanup(func() { a.Close() })
	e := &env{db: gdb, rdb: rdb, prefix: prefix, app: a, store: labStore(gdb)}
	return e, func() []history.LockOp {
		t.Helper()
		ops, err := history.ReadLockOps(path)
		if err != nil {
			t.Fatal(err)
		}
		return ops
	}
}

// kinds is "kind:outcome" for each op, in order.
func kinds(ops []history.LockOp) string {
	var s []string
	for _, op := range ops {
		s = append(s, op.Kind+":"+op.Outcome)
	}
	return strings.Join(s, " ")
}

// wellFormed fails the test unless every op of one grant carries the grant's token and
// fence, names the process and key, completes after it was invoked, and each is invoked once
// the one before it completed (one buyer at a time: the ops of a grant do not overlap), but
// for a loss, which is recorded when the holder is told, as the holder may already be
// releasing.
func wellFormed(t *testing.T, ops []history.LockOp, key string) {
	t.Helper()
	for i, op := range ops {
		if op.Process != "api1" || op.Key != key || op.Token == "" || op.Token != ops[0].Token || op.Fence != ops[0].Fence ||
			op.Complete.Before(op.Invoke) {
			t.Errorf("op %d = %+v, want process api1, key %s, the grant's token and fence, completed after invoked", i, op, key)
		}
		if i > 0 && op.Kind != "loss" && ops[i-1].Kind != "loss" && op.Invoke.Before(ops[i-1].Complete) {
			t.Errorf("op %d (%s) invoked before op %d (%s) completed", i, op.Kind, i-1, ops[i-1].Kind)
		}
	}
}

// TestLockHistoryDlock: with the lock history on, a dlock purchase records its grant (with
// the lock's value and fence), its write, ok once committed, and its release; a lock lost
// while its holder thinks records the loss, no write (none was sent) and a release whose
// outcome is unknown.
func TestLockHistoryDlock(t *testing.T) {
	t.Parallel()
	e, ops := recordedEnv(t, order.Config{LockTTL: 300 * time.Millisecond, LockWait: 3 * time.Second})
	ctx := context.Background()
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil {
		t.Fatal(err)
	}
	key := e.app.Keys.Lock(p.ID)
	got := history.OfKey(ops(), key)
	if k := kinds(got); k != "grant:ok write:ok release:ok" {
		t.Fatalf("ops %s, want grant:ok write:ok release:ok", k)
	}
	wellFormed(t, got, key)
	if got[0].Fence <= 0 {
		t.Errorf("grant's fence %d, want the lock's", got[0].Fence)
	}

	slow := e.product(t, 10, inventory.StrategyDlock, 1500)
	key = e.app.Keys.Lock(slow.ID)
	errc := goPurchase(ctx, e.app.Orders, slow.ID, 1)
	testenv.Eventually(t, 5*time.Second, "the lock to be taken", func() bool { return e.rdb.Exists(ctx, key).Val() == 1 })
	e.rdb.Del(ctx, key) // the lease is gone while the holder thinks
	if err := <-errc; !errors.Is(err, order.ErrBusy) {
		t.Fatalf("purchase whose lock was lost = %v, want ErrBusy", err)
	}
	got = history.OfKey(ops(), key)
	if k := kinds(got); k != "grant:ok loss:ok release:unknown" {
		t.Fatalf("ops %s, want grant:ok loss:ok release:unknown", k)
	}
	wellFormed(t, got, key)
	if got[1].Invoke.Before(got[0].Complete) || got[1].Complete.After(got[2].Complete) {
		t.Errorf("the loss (%v) is not within the grant (%v) and the release's end (%v)", got[1].Invoke, got[0].Complete, got[2].Complete)
	}
}

// TestLockHistoryLab: the lab's purchase records its lock's grant, read, write and release; the
// token is the lock's value where it is unique to the grant (lease: "<pid>:" and random), an
// id of the process's own where it is not (setnx); the read carries the stock read, the
// write the stock written and the one PostgreSQL held before it (5, 4, 5); and a write refused
// by the fence (a newer one wrote the row while the holder thought) is recorded as failed,
// for a stale fence, with the value it would have written and no stock overwritten.
func TestLockHistoryLab(t *testing.T) {
	t.Parallel()
	e, ops := recordedEnv(t, order.Config{LockWait: 3 * time.Second})
	ctx := context.Background()
	for _, tc := range []struct {
		lock   string
		think  int
		fenced bool // the row's fence is raised while the holder thinks
		want   string
	}{
		{"lease", 0, false, "grant:ok read:ok write:ok release:ok"},
		{"setnx", 0, false, "grant:ok read:ok write:ok release:ok"},
		{"dlock", 500, true, "grant:ok read:ok write:fail release:ok"},
	} {
		p, err := e.store.Create(ctx, inventory.NewProduct{Name: "lab", Stock: 5, Strategy: labapi.Lab,
			LabLock: tc.lock, ThinkMS: tc.think})
		if err != nil {
			t.Fatal(err)
		}
		errc := goPurchase(ctx, e.app.Orders, p.ID, 1)
		if tc.fenced {
			testenv.Eventually(t, 5*time.Second, "the holder's claim", func() bool {
				var fence int64
				e.db.Raw(`SELECT fence FROM products WHERE id = ?`, p.ID).Scan(&fence)
				return fence > 0
			})
			mustExec(t, e.db, `UPDATE products SET fence = fence + 1000000 WHERE id = ?`, p.ID)
		}
		err = <-errc
		if tc.fenced != (err != nil) {
			t.Fatalf("%s: purchase = %v", tc.lock, err)
		}
		key := e.app.Keys.Lock(p.ID)
		got := history.OfKey(ops(), key)
		if k := kinds(got); k != tc.want {
			t.Fatalf("%s: ops %s, want %s", tc.lock, k, tc.want)
		}
		wellFormed(t, got, key)
		switch tok := got[0].Token; tc.lock {
		case "setnx":
			if strings.Contains(tok, ":") {
				t.Errorf("setnx: token %q, want an id of the process's own, not the lock's value", tok)
			}
		default:
			if _, ok := lab.OwnerOf(tok); !ok || len(tok) < 20 {
				t.Errorf("%s: token %q, want the lock's value, \"<pid>:\" and random", tc.lock, tok)
			}
		}
		if tc.fenced && got[0].Fence <= 0 {
			t.Errorf("%s: fence %d, want the lock's", tc.lock, got[0].Fence)
		}
		read, write := got[1], got[2]
		if read.Value == nil || *read.Value != 5 || write.Value == nil || *write.Value != 4 {
			t.Errorf("%s: read %v, write %v; want 5 read, 4 written", tc.lock, read.Value, write.Value)
		}
		switch {
		case tc.fenced && (write.Before != nil || write.Reason != history.ReasonFence):
			t.Errorf("%s: the refused write overwrote %v, reason %q; want nothing, %q", tc.lock, write.Before, write.Reason, history.ReasonFence)
		case !tc.fenced && (write.Before == nil || *write.Before != 5 || write.Reason != ""):
			t.Errorf("%s: the write overwrote %v, reason %q; want 5, none", tc.lock, write.Before, write.Reason)
		}
	}
}

// TestLockHistoryBundle: a bundle records, for each of its products' locks, the grant, the
// one transaction as a write under it, and the release; its retry, refused in the
// transaction (already purchased), records its write as failed.
func TestLockHistoryBundle(t *testing.T) {
	t.Parallel()
	e, ops := recordedEnv(t, order.Config{})
	ctx := context.Background()
	a, b := e.product(t, 5, inventory.StrategyDlock, 0), e.product(t, 1, inventory.StrategyDlock, 0)
	if _, err := e.app.Orders.PurchaseBundle(ctx, []int64{a.ID, b.ID}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Orders.PurchaseBundle(ctx, []int64{a.ID, b.ID}, 1); !errors.Is(err, order.ErrAlreadyPurchased) {
		t.Fatalf("the bundle's retry = %v, want ErrAlreadyPurchased", err)
	}
	all := ops()
	for _, id := range []int64{a.ID, b.ID} {
		key := e.app.Keys.Lock(id)
		got := history.OfKey(all, key)
		if k := kinds(got); k != "grant:ok write:ok release:ok grant:ok write:fail release:ok" {
			t.Fatalf("product %d: ops %s, want two bundles' grant, write and release, the second's write failed", id, k)
		}
		wellFormed(t, got[:3], key)
		wellFormed(t, got[3:], key)
		if got[0].Token == got[3].Token || got[0].Fence <= 0 || got[3].Fence <= got[0].Fence {
			t.Errorf("product %d: the two grants' tokens %q, %q and fences %d, %d: want two grants", id, got[0].Token, got[3].Token, got[0].Fence, got[3].Fence)
		}
	}
}
