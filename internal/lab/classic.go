package lab

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// mutex is a sync.Mutex per product per process: it serialises the buyers of one process
// and nobody else's. It is written as a one-slot channel only so that a waiting buyer still
// honours its deadline; the exclusion is the same.
func (l *Locks) mutex(ctx context.Context, key string) (Held, error) {
	v, _ := l.mutexes.LoadOrStore(key, &mutexSlot{ch: make(chan struct{}, 1)})
	m := v.(*mutexSlot)
	tried := time.Now()
	select {
	case m.ch <- struct{}{}:
		// Taken once its last holder let go: the grant took effect after both.
		if freed := time.Unix(0, m.freed.Load()); freed.After(tried) {
			tried = freed
		}
		return Held{Tried: tried, release: func(context.Context) error {
			m.freed.Store(time.Now().UnixNano())
			<-m.ch
			return nil
		}}, nil
	case <-ctx.Done():
		return Held{}, notObtained(ctx)
	}
}

// mutexSlot is the mutex lock of one product in one process.
type mutexSlot struct {
	ch    chan struct{} // holds a value while the mutex is held
	freed atomic.Int64  // when its last holder began to release it, in Unix nanoseconds
}

// setnx is SETNX key, released with DEL: no expiry at all. A holder that dies before its DEL
// leaves the key for ever, and the sale stalls.
func (l *Locks) setnx(ctx context.Context, key string) (Held, error) {
	tried, err := spin(ctx, func() (bool, error) { return l.rdb.SetNX(command(ctx), key, l.owner, 0).Result() })
	return Held{Tried: tried, release: l.delete(key)}, err
}

// setnxExpire is SETNX, then EXPIRE in a second command, released with DEL. A holder that
// dies between the two leaves a key without expiry: the same stall as setnx, in a window
// that ExpireGap widens for the lab.
func (l *Locks) setnxExpire(ctx context.Context, key string, lease time.Duration) (Held, error) {
	tried, err := spin(ctx, func() (bool, error) { return l.rdb.SetNX(command(ctx), key, l.owner, 0).Result() })
	if err != nil {
		return Held{}, err
	}
	time.Sleep(ExpireGap) // the teaching delay: the window between the two commands
	if err := l.rdb.PExpire(context.WithoutCancel(ctx), key, lease).Err(); err != nil {
		return Held{}, err
	}
	return Held{Tried: tried, release: l.delete(key)}, nil
}

// del is SET NX PX with a value that does not tell holders apart, released with a plain DEL.
// A holder whose lease ran out deletes the next holder's lock, letting a third one in.
func (l *Locks) del(ctx context.Context, key string, lease time.Duration) (Held, error) {
	tried, err := spin(ctx, func() (bool, error) { return l.rdb.SetNX(command(ctx), key, l.owner+"locked", lease).Result() })
	return Held{Tried: tried, release: l.delete(key)}, err
}

// lease is SET NX PX with a random token and a compare-and-delete release: correct, but
// nothing renews it, so work longer than the lease runs unprotected.
func (l *Locks) lease(ctx context.Context, key string, lease time.Duration) (Held, error) {
	token := l.token()
	tried, err := spin(ctx, func() (bool, error) { return l.rdb.SetNX(command(ctx), key, token, lease).Result() })
	return Held{Token: token, Tried: tried, release: func(ctx context.Context) error {
		return compareAndDelete.Run(ctx, l.rdb, []string{key}, token).Err()
	}}, err
}

// compareAndDelete deletes KEYS[1] only if it still holds ARGV[1].
var compareAndDelete = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// delete returns a release that deletes key whoever holds it.
func (l *Locks) delete(key string) func(ctx context.Context) error {
	return func(ctx context.Context) error { return l.rdb.Del(ctx, key).Err() }
}

// spin calls try until it reports the lock taken, fails, or ctx ends, pausing between
// attempts for a random 2 to 32 ms, and returns when the attempt that took it began. The
// commands of try run on command(ctx), which the end of the wait does not cancel: a SET that
// Redis carried out is never mistaken for one that failed, which would leave a lock nobody
// holds.
func spin(ctx context.Context, try func() (bool, error)) (tried time.Time, err error) {
	for {
		tried = time.Now()
		ok, err := try()
		switch {
		case err != nil:
			return tried, err
		case ok:
			return tried, nil
		case ctx.Err() != nil:
			return tried, notObtained(ctx)
		}
		t := time.NewTimer(2*time.Millisecond + rand.N(30*time.Millisecond))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return tried, notObtained(ctx)
		}
	}
}

// command is the context of one lock command: ctx's values without its end.
func command(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
