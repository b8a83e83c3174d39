package lab_test

import (
	"context"
	"errors"
	"go/build"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/zklock"
)

// TestLocksExclude: every lab lock that is shared (through Redis, etcd for the etcd lock, or
// PostgreSQL, ZooKeeper) keeps a second taker out while held (it gets dlock.ErrNotObtained,
// etcdlock.ErrNotObtained or zklock.ErrNotObtained when its wait runs out), lets it in once
// released, and writes a value to Redis that names its process; the flaws the lab shows come
// from expiry and faults, not from a lock that never excluded anybody. The etcd lock's case
// is skipped without ETCD_ENDPOINTS; the zookeeper locks' start a ZooKeeper member.
func TestLocksExclude(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	dl := dlock.New(rdb, nil)
	t.Cleanup(func() { dl.Close() })
	pg, _ := testenv.Postgres(t).DB()
	ctx := context.Background()
	zl := zklock.New(zooKeeper(t), zklock.Options{}) // one member for both zookeeper locks
	t.Cleanup(func() { zl.Close() })
	if err := zl.Ping(ctx); err != nil { // its session, before the short waits below
		t.Fatal(err)
	}
	for i, name := range lab.Names {
		if name == "none" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var el *etcdlock.Client
			if name == "etcd" {
				el = etcdlock.New(testenv.Etcd(t), nil)
				t.Cleanup(func() { el.Close() })
			}
			l := lab.New(rdb, lab.Clients{Dlocks: dl, Etcd: el, Postgres: pg, ZooKeeper: zl})
			key := prefix + ":{p:" + strconv.Itoa(i) + "}:lock"
			h, err := l.Acquire(ctx, name, key, time.Second, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Acquire(ctx, name, key, time.Second, 50*time.Millisecond); !notObtained(err) {
				t.Errorf("second acquire while held = %v, want ErrNotObtained", err)
			}
			if name != "mutex" {
				v, _ := rdb.Get(ctx, key).Result()
				if !strings.HasPrefix(v, lab.Owner(os.Getpid())) {
					t.Errorf("value %q does not start with the owner %q", v, lab.Owner(os.Getpid()))
				}
			}
			if err := h.Release(ctx); err != nil {
				t.Errorf("release: %v", err)
			}
			h, err = l.Acquire(ctx, name, key, time.Second, 100*time.Millisecond)
			if err != nil {
				t.Fatalf("acquire after release: %v", err)
			}
			_ = h.Release(ctx)
		})
	}
	if _, err := lab.New(rdb, lab.Clients{Dlocks: dl}).Acquire(ctx, "nope", prefix+":x", time.Second, 0); err == nil {
		t.Error("an unknown lock was acquired")
	}
}

// notObtained reports whether err says a lab lock was not had in time, in any store.
func notObtained(err error) bool {
	return errors.Is(err, dlock.ErrNotObtained) || errors.Is(err, etcdlock.ErrNotObtained) || errors.Is(err, zklock.ErrNotObtained)
}

// TestFlawsAreReal: the flaws the lab relies on, shown on a single Redis without the lab's
// processes: setnx leaves a key without expiry; del's release deletes a lock that a later
// holder took after the first one's lease ran out; lease's release does not.
func TestFlawsAreReal(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	l := lab.New(rdb, lab.Clients{})
	ctx := context.Background()
	key := prefix + ":{p:1}:lock"
	h, err := l.Acquire(ctx, "setnx", key, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl != -1 {
		t.Errorf("setnx: PTTL %v, want -1 (no expiry)", ttl)
	}
	_ = h.Release(ctx)
	for _, tc := range []struct {
		lock    string
		deletes bool
	}{{"del", true}, {"lease", false}} {
		key := prefix + ":{p:2}:" + tc.lock
		first, err := l.Acquire(ctx, tc.lock, key, 20*time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond) // the first holder's lease runs out while it works
		if _, err := l.Acquire(ctx, tc.lock, key, time.Second, 0); err != nil {
			t.Fatalf("%s: second holder: %v", tc.lock, err)
		}
		_ = first.Release(ctx) // the first holder, late
		if gone := rdb.Exists(ctx, key).Val() == 0; gone != tc.deletes {
			t.Errorf("%s: the late release deleted the second holder's lock: %v, want %v", tc.lock, gone, tc.deletes)
		}
	}
}

// TestImports keeps the lab apart: it imports internal/dlock, internal/etcdlock and
// internal/zklock, the locks it shows, and nothing else of seckill.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkg.Imports {
		if strings.HasPrefix(p, "github.com/seckill/seckill/") &&
			p != "github.com/seckill/seckill/internal/dlock" && p != "github.com/seckill/seckill/internal/etcdlock" &&
			p != "github.com/seckill/seckill/internal/zklock" {
			t.Errorf("internal/lab imports %s", p)
		}
	}
}
