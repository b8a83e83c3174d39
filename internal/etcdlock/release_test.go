package etcdlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestFailedReleaseCostsOneLock: a process holds two locks, under its one session (one
// lease), and the release of one fails: its only etcd paused (SIGSTOP) for the release's
// whole deadline, or the release's context already ended. The other lock is still held: its
// watched context is not cancelled, its key is there with its fence, another process waits
// for it in vain, and it is released without error. The failed one's key is deleted in the
// background: another process takes that lock within 5 s, where its lease (10 s) could not
// have expired yet.
func TestFailedReleaseCostsOneLock(t *testing.T) {
	testenv.SkipShort(t, "an etcd of its own")
	ctx := context.Background()
	member := servers.StartEtcd(t)
	a, b := newClient(t, member.ClientURL), newClient(t, member.ClientURL)
	raw := etcdClient(t, member.ClientURL)
	const ttl = 10 * time.Second
	cases := []struct {
		name    string
		release func(l *etcdlock.Lock) error
	}{
		{"etcd paused", func(l *etcdlock.Lock) error {
			member.Pause()
			defer member.Resume()
			rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			return l.Release(rctx)
		}},
		{"context ended", func(l *etcdlock.Lock) error {
			rctx, cancel := context.WithCancel(ctx)
			cancel()
			return l.Release(rctx)
		}},
	}
	for _, c := range cases {
		kept, err := a.Obtain(ctx, lockKey(), ttl, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		watched := kept.Watch(ctx)
		failed, err := a.Obtain(ctx, lockKey(), ttl, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.release(failed); !errors.Is(err, etcdlock.ErrUnavailable) {
			t.Fatalf("%s: release = %v, want ErrUnavailable", c.name, err)
		}
		start := time.Now()
		if l, err := b.Obtain(ctx, failed.Key(), ttl, 5*time.Second); err != nil {
			t.Errorf("%s: the lock whose release failed is not free within 5 s: %v", c.name, err)
		} else {
			t.Logf("%s: the lock whose release failed was had by another process %v later", c.name, time.Since(start))
			_ = l.Release(ctx)
		}
		checkHeld(t, c.name, b, raw, kept, watched)
	}
}

// checkHeld fails the test unless kept, watched by watched, is still held: the context is
// not cancelled, the lock's first key is kept's, the other process other waits 2 s for the
// lock in vain, and kept is released without error.
func checkHeld(t *testing.T, name string, other *etcdlock.Client, raw *clientv3.Client, kept *etcdlock.Lock, watched context.Context) {
	t.Helper()
	ctx := context.Background()
	if l, err := other.Obtain(ctx, kept.Key(), 10*time.Second, 2*time.Second); !errors.Is(err, etcdlock.ErrNotObtained) {
		t.Errorf("%s: another process's wait for the other lock = %v, want ErrNotObtained", name, err)
		if err == nil {
			_ = l.Release(ctx)
		}
	}
	if cause := context.Cause(watched); cause != nil {
		t.Errorf("%s: the other lock's watched context ended: %v", name, cause)
	}
	resp, err := raw.Get(ctx, kept.Key()+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != kept.Fence() {
		t.Errorf("%s: the other lock's first key is %v, want one created at its fence %d", name, resp.Kvs, kept.Fence())
	}
	if err := kept.Release(ctx); err != nil {
		t.Errorf("%s: release of the other lock = %v", name, err)
	}
}

// TestFailedWaitCostsNoLock: a process holds a lock and waits for another, which a second
// process holds; its only etcd is paused (SIGSTOP) during the wait and for 3 s after it, so
// that the removal of the waiter's key is not confirmed within its 2 s either. The lock held
// is kept (see checkHeld), and once etcd answers again the waiter's key goes: the second
// process releases, and takes the lock again at once, where the waiter's key would have held
// it up until its lease (10 s) expired.
func TestFailedWaitCostsNoLock(t *testing.T) {
	testenv.SkipShort(t, "an etcd of its own")
	ctx := context.Background()
	member := servers.StartEtcd(t)
	a, b := newClient(t, member.ClientURL), newClient(t, member.ClientURL)
	raw := etcdClient(t, member.ClientURL)
	const ttl = 10 * time.Second
	kept, err := a.Obtain(ctx, lockKey(), ttl, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	watched := kept.Watch(ctx)
	other, err := b.Obtain(ctx, lockKey(), ttl, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, member.Pause)
	if _, err := a.Obtain(ctx, other.Key(), ttl, time.Second); !errors.Is(err, etcdlock.ErrUnavailable) {
		t.Errorf("a wait with etcd paused = %v, want ErrUnavailable", err)
	}
	time.Sleep(3 * time.Second) // the waiter's key's removal runs out meanwhile
	member.Resume()
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if l, err := b.Obtain(ctx, other.Key(), ttl, 5*time.Second); err != nil {
		t.Errorf("the lock the failed waiter waited for is not free within 5 s: %v", err)
	} else {
		t.Logf("the lock the failed waiter waited for was had again %v after its release", time.Since(start))
		_ = l.Release(ctx)
	}
	checkHeld(t, "failed wait", b, raw, kept, watched)
}
