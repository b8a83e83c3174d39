package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
)

var errBoom = errors.New("boom")

func TestDoRunsUnderLockAndReleases(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "do")
	err := c.Do(ctx, key, time.Second, nil, func(ctx context.Context, l *dlock.Lock) error {
		if got, _ := rdb.Get(ctx, key).Result(); got != l.Token() {
			t.Errorf("inside Do the key holds %q, want the token", got)
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) || errors.Is(err, dlock.ErrLost) {
		t.Fatalf("Do = %v, want fn's error alone", err)
	}
	if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("Do did not release after an error")
	}
	if err := c.Do(ctx, key, time.Second, nil, func(context.Context, *dlock.Lock) error { return nil }); err != nil {
		t.Fatalf("Do = %v", err)
	}
}

func TestDoReleasesOnPanic(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "panic")
	func() {
		defer func() {
			if r := recover(); r != errBoom {
				t.Fatalf("recovered %v, want the panic to go on", r)
			}
		}()
		_ = c.Do(ctx, key, time.Second, nil, func(context.Context, *dlock.Lock) error { panic(errBoom) })
	}()
	if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("Do did not release after a panic")
	}
}

func TestDoReportsLoss(t *testing.T) {
	ctx := context.Background()
	rdb, base, c := oneKey(t, "lost")
	for i, fnErr := range []error{nil, errBoom} {
		key := fmt.Sprintf("%s:%d", base, i)
		err := c.Do(ctx, key, 200*time.Millisecond, nil, func(ctx context.Context, _ *dlock.Lock) error {
			rdb.Del(ctx, key)
			waitDone(t, ctx, lossBound)
			return fnErr
		})
		if !errors.Is(err, dlock.ErrLost) || (fnErr != nil && !errors.Is(err, fnErr)) {
			t.Fatalf("Do = %v, want ErrLost joined with %v", err, fnErr)
		}
	}
}

func TestDoNotObtained(t *testing.T) {
	ctx := context.Background()
	_, key, c := oneKey(t, "busy")
	l := mustObtain(t, c, key, time.Minute, nil)
	defer l.Release(ctx)
	called := false
	err := c.Do(ctx, key, time.Second, nil, func(context.Context, *dlock.Lock) error { called = true; return nil })
	if !errors.Is(err, dlock.ErrNotObtained) || called {
		t.Fatalf("Do on a held key = %v (fn called: %v), want ErrNotObtained", err, called)
	}
}

// A caller whose context ends while fn runs still gets the lock released.
func TestDoReleasesAfterCallerCancels(t *testing.T) {
	rdb, key, c := oneKey(t, "cancel")
	ctx, cancel := context.WithCancel(context.Background())
	err := c.Do(ctx, key, time.Minute, nil, func(ctx context.Context, _ *dlock.Lock) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, dlock.ErrLost) {
		t.Fatalf("Do = %v, want context.Canceled alone", err)
	}
	if n, _ := rdb.Exists(context.Background(), key).Result(); n != 0 {
		t.Fatal("Do did not release after the caller cancelled")
	}
}

func TestDoWhenFnReleases(t *testing.T) {
	_, key, c := oneKey(t, "self")
	err := c.Do(context.Background(), key, time.Second, nil, func(ctx context.Context, l *dlock.Lock) error {
		return l.Release(ctx)
	})
	if err != nil {
		t.Fatalf("Do = %v, want nil: fn released the lock itself", err)
	}
}
