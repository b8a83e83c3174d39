// Package keyed is mutual exclusion per key within one process: one mutex per key, made when
// a key is first wanted and dropped when no goroutine holds or waits for it, so that the
// keys seen (product locks, say) do not pile up. A waiter honours its context, and waiters
// are served in the order they came (Go serves blocked channel senders in order). It
// imports only the standard library.
package keyed

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Mutexes holds one mutex per key. The zero value is ready; it is safe for concurrent use.
type Mutexes struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	ch      chan struct{} // holds a token while the key is locked
	refs    int           // goroutines holding or waiting
	blocked int           // goroutines blocked in LockBefore; guarded by Mutexes.mu
}

// ErrExpired is LockBefore's error when its expired channel delivered first.
var ErrExpired = errors.New("keyed: wait expired")

// Lock takes key's mutex, waiting until ctx ends: then it returns ctx.Err() and holds
// nothing. Unlock gives it back.
func (k *Mutexes) Lock(ctx context.Context, key string) error {
	return k.LockBefore(ctx, key, nil)
}

// LockBefore is Lock that also gives up, with ErrExpired, when expired delivers (a timer's
// channel, say); a nil expired never does.
func (k *Mutexes) LockBefore(ctx context.Context, key string, expired <-chan time.Time) error {
	e := k.ref(key)
	select {
	case e.ch <- struct{}{}:
		return nil
	default:
	}
	k.block(e, 1)
	defer k.block(e, -1)
	select {
	case e.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		k.unref(key)
		return ctx.Err()
	case <-expired:
		k.unref(key)
		return ErrExpired
	}
}

func (k *Mutexes) block(e *entry, n int) {
	k.mu.Lock()
	e.blocked += n
	k.mu.Unlock()
}

// TryLock takes key's mutex if no goroutine holds it or waits for it, and reports whether
// it did.
func (k *Mutexes) TryLock(key string) bool {
	e := k.ref(key)
	select {
	case e.ch <- struct{}{}:
		return true
	default:
		k.unref(key)
		return false
	}
}

// Unlock gives back key's mutex, which the caller holds.
func (k *Mutexes) Unlock(key string) {
	k.mu.Lock()
	<-k.m[key].ch
	k.mu.Unlock()
	k.unref(key)
}

// Waiters returns how many goroutines wait in Lock or LockBefore for key's mutex.
func (k *Mutexes) Waiters(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.m[key]
	if e == nil {
		return 0
	}
	return e.blocked
}

func (k *Mutexes) ref(key string) *entry {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*entry{}
	}
	e := k.m[key]
	if e == nil {
		e = &entry{ch: make(chan struct{}, 1)}
		k.m[key] = e
	}
	e.refs++
	return e
}

func (k *Mutexes) unref(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.m[key]
	if e.refs--; e.refs == 0 {
		delete(k.m, key)
	}
}
