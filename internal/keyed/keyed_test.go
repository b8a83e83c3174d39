package keyed_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/keyed"
)

// TestExclusion: goroutines on one key never overlap; other keys are not held up.
func TestExclusion(t *testing.T) {
	var k keyed.Mutexes
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 100 {
				if err := k.Lock(context.Background(), "a"); err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				inside.Add(-1)
				k.Unlock("a")
			}
		})
	}
	if !k.TryLock("b") {
		t.Error("TryLock of another key failed")
	}
	k.Unlock("b")
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Errorf("%d overlaps", overlaps.Load())
	}
}

// TestWaitEnds: a waiter whose context ends, or whose expired channel delivers, holds nothing; TryLock of a held key fails, and
// succeeds once it is free.
func TestWaitEnds(t *testing.T) {
	var k keyed.Mutexes
	if err := k.Lock(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := k.Lock(ctx, "a"); err != context.DeadlineExceeded {
		t.Errorf("Lock of a held key = %v, want the deadline", err)
	}
	timer := time.NewTimer(20 * time.Millisecond)
	defer timer.Stop()
	if err := k.LockBefore(context.Background(), "a", timer.C); !errors.Is(err, keyed.ErrExpired) {
		t.Errorf("LockBefore of a held key = %v, want ErrExpired", err)
	}
	if k.TryLock("a") {
		t.Error("TryLock of a held key succeeded")
	}
	k.Unlock("a")
	if !k.TryLock("a") {
		t.Error("TryLock of a free key failed")
	}
	k.Unlock("a")
}
