package zklock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/zklock"
)

// TestObtainRelease: a held lock is busy for another process and for another goroutine of
// the same one; once released it is had again, with a larger fence.
func TestObtainRelease(t *testing.T) {
	ctx := context.Background()
	srv := ensemble(t)
	a, b := newClient(t, srv), newClient(t, srv)
	key := lockKey()
	l, err := a.Obtain(ctx, key, 2*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if l.Fence() <= 0 || l.Key() != key {
		t.Fatalf("fence %d, key %q", l.Fence(), l.Key())
	}
	for name, c := range map[string]*zklock.Client{"other process": b, "same process": a} {
		for _, wait := range []time.Duration{0, 200 * time.Millisecond} {
			if _, err := c.Obtain(ctx, key, 2*time.Second, wait); !errors.Is(err, zklock.ErrNotObtained) {
				t.Errorf("%s, wait %v: Obtain of a held lock = %v, want ErrNotObtained", name, wait, err)
			}
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err := b.Obtain(ctx, key, 2*time.Second, 0)
	if err != nil {
		t.Fatalf("Obtain after the release: %v", err)
	}
	defer l2.Release(ctx)
	if l2.Fence() <= l.Fence() {
		t.Errorf("fence after the release %d, want more than %d", l2.Fence(), l.Fence())
	}
}

// TestMutualExclusion: three processes of eight goroutines each take turns on one key; no
// two are ever inside at once, and every holder's fence is larger than the one before.
func TestMutualExclusion(t *testing.T) {
	srv := ensemble(t)
	key := lockKey()
	var (
		inside, overlaps, turns atomic.Int64
		mu                      sync.Mutex
		last                    int64
		wg                      sync.WaitGroup
	)
	for range 3 {
		c := newClient(t, srv)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					err := c.Do(context.Background(), key, 2*time.Second, 10*time.Second,
						func(ctx context.Context, l *zklock.Lock) error {
							if inside.Add(1) != 1 {
								overlaps.Add(1)
							}
							mu.Lock()
							if l.Fence() <= last {
								t.Errorf("fence %d after %d", l.Fence(), last)
							}
							last = l.Fence()
							mu.Unlock()
							time.Sleep(time.Millisecond)
							inside.Add(-1)
							return nil
						})
					if err != nil {
						t.Error(err)
						return
					}
					turns.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if overlaps.Load() != 0 || turns.Load() != 3*8*5 {
		t.Errorf("%d overlaps in %d turns, want 0 in %d", overlaps.Load(), turns.Load(), 3*8*5)
	}
}

// TestCancelledWaiterLeaves: a waiter whose context ends removes its node, so the next
// waiter behind it is granted the lock as soon as the holder releases.
func TestCancelledWaiterLeaves(t *testing.T) {
	ctx := context.Background()
	srv := ensemble(t)
	a, b, c := newClient(t, srv), newClient(t, srv), newClient(t, srv)
	key := lockKey()
	held, err := a.Obtain(ctx, key, 10*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := b.Obtain(wctx, key, 10*time.Second, 10*time.Second); !errors.Is(err, zklock.ErrNotObtained) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait = %v, want ErrNotObtained and context.Canceled", err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := c.Obtain(ctx, key, 10*time.Second, 5*time.Second)
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := <-got; err != nil {
		t.Fatalf("the waiter behind the cancelled one: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the waiter behind the cancelled one was granted %v after the release", took)
	}
}

// TestLost: when the holder's session ends (closed here; an expiry deletes its node alike),
// its watched context is cancelled with ErrLost, Do reports the loss, and the next holder has
// a larger fence.
func TestLost(t *testing.T) {
	ctx := context.Background()
	srv := ensemble(t)
	c, other := zklock.New(srv, zklock.Options{}), newClient(t, srv)
	key := lockKey()
	var fence int64
	err := c.Do(ctx, key, 2*time.Second, time.Second, func(ctx context.Context, l *zklock.Lock) error {
		fence = l.Fence()
		go c.Close()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(10 * time.Second):
			return errors.New("not told of the loss within 10 s")
		}
	})
	if !errors.Is(err, zklock.ErrLost) {
		t.Fatalf("Do = %v, want ErrLost", err)
	}
	l, err := other.Obtain(ctx, key, 2*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if l.Fence() <= fence {
		t.Errorf("fence after the loss %d, want more than %d", l.Fence(), fence)
	}
}

// TestDoMulti: two callers with overlapping keys, named in opposite orders, both get
// through; a key named twice is refused.
func TestDoMulti(t *testing.T) {
	ctx := context.Background()
	srv := ensemble(t)
	a, b := newClient(t, srv), newClient(t, srv)
	k1, k2, k3 := lockKey(), lockKey(), lockKey()
	var wg sync.WaitGroup
	for i, c := range []*zklock.Client{a, b} {
		keys := []string{k1, k2, k3}
		if i == 1 {
			keys = []string{k3, k2, k1}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				err := c.DoMulti(ctx, keys, 2*time.Second, 10*time.Second, func(ctx context.Context, ls []*zklock.Lock) error {
					if len(ls) != 3 || ls[0].Key() > ls[1].Key() {
						t.Errorf("locks %v", ls)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := a.DoMulti(ctx, []string{k1, k1}, time.Second, 0, nil); err == nil {
		t.Error("DoMulti with a key named twice: no error")
	}
}

// TestUnavailable: with nothing listening where ZooKeeper should be, Obtain fails within its
// wait with ErrUnavailable, not ErrNotObtained: down is not busy.
func TestUnavailable(t *testing.T) {
	c := newClient(t, []string{testenv.FreeAddr(t)})
	start := time.Now()
	_, err := c.Obtain(context.Background(), lockKey(), 2*time.Second, 300*time.Millisecond)
	if !errors.Is(err, zklock.ErrUnavailable) || errors.Is(err, zklock.ErrNotObtained) {
		t.Errorf("Obtain with zookeeper down = %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Obtain with zookeeper down took %v", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := c.Ping(ctx); !errors.Is(err, zklock.ErrUnavailable) {
		t.Errorf("Ping with zookeeper down = %v, want ErrUnavailable", err)
	}
}
