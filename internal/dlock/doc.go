// Package dlock implements a distributed mutual-exclusion lock on Redis (one node, sentinel,
// cluster, or Redlock over independent masters), with a watchdog that tells the holder when its
// lock is gone, fencing tokens to check where the data lives, and waiting that does not storm a
// hot key. Fair (ObtainFair), read-write (Client.RW) and multi-key (ObtainMulti) locks share the
// Client.
//
// Create one Client per Redis client with New, or with NewRedlock for a majority of
// independent masters, and share it. Close stops its background work; it neither releases
// held locks nor closes the Redis clients.
//
//	locks := dlock.New(rdb, nil)
//	defer locks.Close()
//	l, err := locks.Obtain(ctx, "seckill:{p:42}:lock", 5*time.Second, &dlock.Options{Wait: time.Second})
//	switch {
//	case errors.Is(err, dlock.ErrNotObtained): // busy: try again later (HTTP 503 + Retry-After)
//	case err != nil:                           // Redis down, or a bad argument
//	}
//	defer l.Release(context.WithoutCancel(ctx))
//	ctx = l.Watch(ctx) // renewed at ttl/3; cancelled, with cause ErrLost, if the lock is lost
//
// Client.Do does the same around a function. A nil *Options, and each zero field of one,
// means the documented default.
//
// Compare errors with errors.Is: ErrNotObtained (busy; a wait that ctx ended matches ctx.Err()
// too), ErrNotHeld (Release, Refresh or TTL of a lock no longer held), ErrLost (the cause of a
// watched context whose lock was lost), ErrClosed (after Close). A Redis failure is returned
// wrapped and is never ErrNotObtained.
//
// A lock cannot stop a paused holder: store Lock.Fence next to the data and make each write
// conditional on it (UPDATE ... WHERE id = $1 AND fence < $2). The lock is not reentrant.
// docs/dlock.md is the guide: using the package, the guarantees, failure modes and benchmarks.
package dlock
