// Package dlock implements a distributed mutual-exclusion lock on Redis (one
// node, sentinel, cluster, or Redlock over independent masters), with a
// watchdog that tells the holder when its lock is gone, fencing tokens to
// check where the data lives, and waiting that does not storm a hot key.
//
// This documentation is the reference: how to use the lock, what it
// guarantees, what its errors mean. Why it is built so, how it compares with
// Redisson, redsync and redislock, how it behaves under each failure, and
// what it costs (benchmarks) is the design guide, docs/dlock.md in the
// repository.
//
// # Clients
//
// New takes locks in one Redis: a single-node, sentinel (failover) or cluster
// client, any redis.UniversalClient. NewRedlock takes each lock on a majority
// of independent Redis masters (see Redlock below). Both take a
// *ClientOptions; nil means the defaults:
//
//	locks := dlock.New(rdb, nil) // or dlock.New(rdb, &dlock.ClientOptions{Observer: obs})
//	defer locks.Close()
//
// Create one Client per Redis client (or Redlock node set) and share it: the
// local wait queue and the release subscription are per Client. Close stops
// the Client's background work; it neither releases held locks nor closes the
// Redis clients.
//
// # Use
//
//	l, err := locks.Obtain(ctx, "seckill:{p:42}:lock", 5*time.Second, &dlock.Options{Wait: time.Second})
//	switch {
//	case errors.Is(err, dlock.ErrNotObtained): // busy: try again later (HTTP 503 + Retry-After)
//	case err != nil:                           // Redis down, or a bad argument
//	}
//	defer l.Release(context.WithoutCancel(ctx))
//	ctx = l.Watch(ctx) // renewed at ttl/3; cancelled, with cause ErrLost, if the lock is lost
//
// Client.Do does all of this around a function, also on panic, and joins
// ErrLost into the function's error when the lock was lost while it ran:
//
//	err := locks.Do(ctx, key, 5*time.Second, &dlock.Options{Wait: time.Second},
//		func(ctx context.Context, l *dlock.Lock) error {
//			return purchase(ctx, l.Fence()) // ctx is the watched context
//		})
//
// A nil *Options, and every zero field of one, means the documented default:
// try once (no Wait), no cap on the hold time, a random token, the Client's
// Observer (see Options).
//
// # Errors
//
// Compare errors with errors.Is, never ==: most are returned wrapped or
// joined with the reason.
//
//   - ErrNotObtained: the key is busy and Options.Wait ran out (or was zero).
//     A wait that ctx ended matches ctx.Err() too: both errors.Is(err,
//     ErrNotObtained) and errors.Is(err, context.Canceled) hold.
//   - A Redis failure is returned wrapped and is never ErrNotObtained, so a
//     caller can tell "busy" (retry shortly) from "Redis down" (seckill
//     answers 503 unavailable rather than busy).
//   - ErrNotHeld: Release, Refresh or TTL on a lock that expired, that
//     someone else holds now (left untouched), that was lost, or that was
//     released already.
//   - ErrLost: the context.Cause of a watched context whose lock was lost,
//     wrapped with the reason; Do joins it into its error.
//   - ErrClosed: Obtain or Do after Client.Close.
//
// # Guarantees
//
// A lock is one Redis key holding a random token (128 bits from crypto/rand,
// never a constant), set with SET NX PX semantics by a Lua script. Only the
// holder's token can refresh or delete it (compare-and-pexpire,
// compare-and-delete), so a holder whose lock expired cannot release, or
// extend, the next holder's lock: it gets ErrNotHeld.
//
// The holder knows until when the lock is safe: Lock.Deadline is the time the
// acquire (or last successful refresh) call was sent, plus the ttl, minus a
// drift margin (Options.Drift). Lock.Watch renews the lock at ttl/3 and
// cancels its context, with a cause wrapping ErrLost, as soon as a renewal
// finds the lock gone or the deadline passes without a successful renewal,
// however long a hung Redis call takes. It never re-acquires a lost lock.
//
// Every successful Obtain of a key mints a fencing token (Lock.Fence) larger
// than all earlier ones of that key, in the same atomic script. Expiry-based
// locks cannot stop a paused holder (GC, swap, a slow network) from acting
// after its lock expired; the fence can, where the data is written.
//
// Release stops the watchdog and waits for it to exit; after Release and
// Close no goroutine of the Client is left.
//
// # Fencing where the data lives
//
// Store the fence of the last writer next to the data and make every write
// conditional on it, in the same statement or transaction as the write:
//
//	ALTER TABLE products ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
//
//	UPDATE products SET stock = stock - 1, fence = $2
//	WHERE id = $1 AND fence < $2
//
// with $2 = l.Fence(). Zero rows affected means a holder with a fence at least
// as large has written since: this holder's lock expired, so it must roll back
// and stop. (When the statement checks more, such as stock > 0, read the row
// to tell which condition failed.) The comparison is strict so that a fence
// Redis gave twice, after losing data, writes for one holder only; a holder that
// writes several times stores its token beside the fence and admits an equal
// fence with its own token. Holding the lock until after COMMIT is still
// required; the fence only stops a stale holder from doing damage.
//
// # When Redis loses its data
//
// A fence is the Redis server's TIME in microseconds when it was minted, or one
// more than the last fence when that is not below the clock; the last fence is
// kept in one companion key per lock key, which expires 7 days after its last
// use. If that key is lost or stale (expired, evicted, Redis restarted without
// persistence or from an older snapshot or AOF, or failed over to a replica that
// missed the last writes), the next fence is the clock now: above every fence
// minted before unless one of them was above that clock (minted by a clock that
// ran ahead and was set right, or carried past a clock that stepped back). A
// holder whose write the store refused for a fence it has seen calls
// Lock.RaiseFence with that fence: while the key still holds its token, the lock
// gets a new fence above it, and so does every later holder. docs/dlock.md
// ("If Redis loses its data") states the bound exactly. Mutual exclusion itself
// is what a single Redis can give: while data is lost, two processes may both
// hold a lock; the fence check is what keeps their writes safe. Run the lock
// Redis with maxmemory-policy noeviction, and keep its clock synchronised (NTP,
// slewing, not stepping).
//
// # Not reentrant
//
// Obtaining a key that the same goroutine already holds blocks (or fails)
// like any other Obtain, as with sync.Mutex, and on purpose: a reentrant lock
// hides which code owns the critical section, and an inner "release" either
// releases too early or silently does nothing. Code that needs the lock
// should take the *Lock as a parameter instead of obtaining it again:
//
//	func reserve(ctx context.Context, tx pgx.Tx, l *dlock.Lock, id int64) error {
//		_, err := tx.Exec(ctx, updateSQL, id, l.Fence())
//		return err
//	}
//
// # Waiting
//
// With Options.Wait, Obtain waits for the holder: a release publishes on a
// per-key channel, to which each Client subscribes through one shared pub/sub
// connection. It publishes only when someone waits: an acquire that finds the
// key busy sets a key named like the channel for a minute, and the release
// that deletes it publishes. Jittered exponential backoff polling (never
// longer than the holder's remaining ttl) is the fallback when a
// notification is missed.
// Within one Client only one goroutine per key competes in Redis at a time;
// the others queue locally, in FIFO order.
//
// # Handing over within a Client
//
// With ClientOptions.Cohort n, a Release that finds a goroutine of the same
// Client queued for the key hands the lock to it in one Redis call (the key
// takes the waiter's token and a fresh ttl, and the waiter's fence is minted)
// instead of a release and an acquire, at most n times in a row; then the
// lock is released to every Client. Each holder keeps its own token, fence
// and watchdog, and a Release whose key no longer holds its token still
// answers ErrNotHeld. Redlock, fair and read-write locks never hand over.
//
// # Fair locks
//
// Obtain is fair within a Client but not across Clients: after a release, the
// first waiter of whichever process asks first wins. ObtainFair grants a key to
// its waiters in the order they first asked, across every Client: each waiter
// holds a place in a queue kept in Redis next to the key (in its hash slot) and
// keeps it by asking again at least every MaxBackoff. A waiter that stops asking
// (its process died) is dropped after the queue timeout, 1 s or 8 × MaxBackoff,
// and a waiter that gives up leaves at once. A fair key must only be obtained
// with ObtainFair. Fair locks need one Redis or one Redis Cluster; under Redlock
// ObtainFair returns ErrFairRedlock.
//
// # Readers and writers
//
// Client.RW(key) is a read-write lock: RWMutex.RLock takes the key for reading
// (many readers at once) and RWMutex.Lock for writing (one writer, no reader).
// A waiting writer claims the next turn and new readers wait behind it, so a
// stream of readers cannot starve it. Every reader and writer is a Lock of its
// own, with token, fence and watchdog. Readers that died are dropped when their
// ttl runs out. Not under Redlock (ErrRWRedlock).
//
// # Several keys at once
//
// ObtainMulti takes every key of a set, or none, as a MultiLock: one Lock per
// key (each with its own token, fence and watchdog), taken in sorted key order
// so that callers with overlapping sets cannot deadlock, and released before
// ObtainMulti returns an error. MultiLock.Watch is cancelled when any key is
// lost. The keys may live on different masters of a Redis Cluster.
//
// # Redis deployments
//
// A Client works with any redis.UniversalClient: single node, sentinel or
// cluster. The keys a script touches share the lock key's hash slot: a key
// with a hash tag, such as "seckill:{p:42}:lock", keeps it for its fence key
// ("seckill:{p:42}:lock:fence") and release channel
// ("seckill:{p:42}:lock:rel"); a key without one is wrapped in a tag that
// hashes like it ("orders" gives "{orders}:fence"). A key with a '}' but no
// valid hash tag is rejected. Release notifications use PUBLISH, which a
// cluster delivers to subscribers on any node.
//
// go-redis bounds socket reads and writes by its ReadTimeout and WriteTimeout
// (3s by default) and, unless ContextTimeoutEnabled is set, ignores context
// deadlines there. The watchdog does not depend on it, but Release and Obtain
// return sooner on a hung Redis with ContextTimeoutEnabled set.
//
// The scripts run with EVALSHA, falling back to EVAL. They are tested on
// Redis 7.0, and written for Redis 3.2 and later (untested there).
//
// # Redlock
//
// NewRedlock takes each lock on a majority of N independent Redis masters
// (not replicas of each other, not one cluster; use an odd N: 3 survive the
// loss of one node, 5 of two), with the same Client and Lock API. Give the
// node clients these options (NewRedlock says why):
//
//	var nodes []redis.UniversalClient
//	for _, addr := range []string{"10.0.1.1:6379", "10.0.2.1:6379", "10.0.3.1:6379"} {
//		nodes = append(nodes, redis.NewClient(&redis.Options{
//			Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1,
//		}))
//	}
//	locks := dlock.NewRedlock(nodes, nil)
//
// Acquire calls go to every node at once, each bounded by a short node
// timeout, and the lock is had when a majority granted it before its validity
// (ttl, less the time taken and the drift margin) ran out; otherwise the
// attempt is undone on every node that may have granted it. Renewals and
// releases need a majority; a lock that a majority no longer holds is lost.
// So one node of three may be down, hung or wiped without stopping or
// breaking the lock. An attempt that fewer than a majority of nodes answered
// is retried like a busy one while Options.Wait lasts; if Wait runs out on
// such an attempt, Obtain returns its Redis error, not ErrNotObtained.
// Client.Ping is nil when a majority of the nodes answer.
//
// The fence of a Redlock lock is the largest that the granting nodes minted,
// written back to the granting nodes below it until a majority stores it.
// Two majorities share a node, so the next holder's fence is larger, whatever
// the nodes' clocks say. The limits: a node that restarts without its data
// forgets both the lock and the fence; if it is the only node two majorities
// share, mutual exclusion may break and the fence falls back to that node's
// clock term, which is smaller only if its clock runs behind the clock that
// minted the last fence. Keep a restarted node out for one ttl (or give it
// fsync-always persistence), and keep the clocks in sync. The validity time
// assumes clocks advance at about the same rate everywhere and processes do
// not pause for longer than the drift margin; a GC or VM pause can still
// outlive the lock, as with one Redis. The fence check where the data lives
// is what stays correct when those assumptions fail.
//
// # Observability
//
// An Observer (Options.Observer, or ClientOptions.Observer for every lock of
// a Client) receives acquire waits, contention, renewals, losses and hold
// times. dlock imports no metrics library; the application wires one in.
// Do not use the raw key as a metric label (it holds a product id, say, and
// the label set would be unbounded): label by key family instead.
package dlock
