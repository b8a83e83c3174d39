package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
)

// TestTurnPassesAtDeadline: a Lock that is neither released nor watched keeps its key's turn
// in the Client's local queue only until its safe deadline; a goroutine of the same Client
// that queued for the key then competes in Redis and gets it once the key expires. The timer
// that passes the turn is armed when the goroutine queues, not at the Obtain.
func TestTurnPassesAtDeadline(t *testing.T) {
	_, key, c := oneKey(t, "turn-deadline")
	held := mustObtain(t, c, key, 300*time.Millisecond, nil) // never released
	start := time.Now()
	l, err := c.Obtain(context.Background(), key, time.Second, &dlock.Options{Wait: 3 * time.Second})
	if err != nil {
		t.Fatalf("a local waiter behind a Lock never released: %v after %v, want the lock", err, time.Since(start))
	}
	if waited, least := time.Since(start), time.Until(held.Deadline())+time.Since(start); waited < least {
		t.Fatalf("the local waiter got the key after %v, before the holder's deadline (%v)", waited, least)
	}
	mustRelease(t, l)
}

// TestTurnOverdueWithoutWait: an Obtain without a Wait, which does not queue, takes the turn
// of a Lock of its Client that is past its safe deadline, never released nor watched.
func TestTurnOverdueWithoutWait(t *testing.T) {
	_, key, c := oneKey(t, "turn-overdue")
	held := mustObtain(t, c, key, 300*time.Millisecond, nil) // never released
	if _, err := c.Obtain(context.Background(), key, time.Second, nil); !errors.Is(err, dlock.ErrNotObtained) {
		t.Fatalf("Obtain without a Wait while the turn is held = %v, want ErrNotObtained", err)
	}
	time.Sleep(time.Until(held.Deadline().Add(100 * time.Millisecond))) // the key expires at the ttl
	mustRelease(t, mustObtain(t, c, key, time.Second, nil))
}

// TestTurnKeptWhileWatched: a watched Lock keeps its key's turn until it is released; the
// local waiter gets the key right after.
func TestTurnKeptWhileWatched(t *testing.T) {
	_, key, c := oneKey(t, "turn-watched")
	held := mustObtain(t, c, key, 300*time.Millisecond, nil)
	held.Watch(context.Background())
	got := make(chan error, 1)
	go func() {
		l, err := c.Obtain(context.Background(), key, time.Second, &dlock.Options{Wait: 5 * time.Second})
		if err == nil {
			err = l.Release(context.Background())
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the local waiter finished while the watched holder held the key: %v", err)
	case <-time.After(time.Second): // over three ttls: renewed, and the turn kept
	}
	mustRelease(t, held)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the local waiter after the release: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the local waiter did not get the key within 3 s of the release")
	}
	if err := held.Release(context.Background()); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("second Release = %v, want ErrNotHeld", err)
	}
}
