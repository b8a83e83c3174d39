// Package etcdlock takes product locks in etcd, the consensus alternative to the Redis locks
// of internal/dlock, with the same contract where it applies: obtain with a wait and a
// context, a lease kept alive while the lock is held (etcd's keep-alive is the watchdog),
// loss reported by cancelling the holder's context with ErrLost, release, and a fencing
// token.
//
// It is built on the official client (go.etcd.io/etcd/client/v3) and its concurrency
// package's Session: a lease per process and lease length, kept alive while the process
// lives. A lock is a key under the lock's name, written with that lease; the key created
// first holds the lock and the others wait for the keys before theirs to go, so waiters are
// served in the order they came (a fair lock, always). That is the protocol of the
// package's Mutex, written again here (mutex.go) for two faults of it, measured: its waiter
// watches from a revision etcd serves only in its loop for lagging watchers, every 100 ms
// (about 40 handoffs/s between processes; 250 here), and after a failed wait it removes the
// waiter's key with no deadline, which hangs for as long as etcd is down. The fence is the
// lock key's create revision, which etcd raises with every write anywhere in its keyspace,
// so a later holder of a key always has a larger fence than an earlier one.
//
// What it guarantees comes from etcd, not from this package: with a majority of members up,
// at most one session holds a key; a session whose lease expires (its process paused or cut
// off for longer than the TTL) loses its keys to the next waiter, and its holder learns of it
// only when its keep-alive gives up (see Lock.Watch). A holder paused past its lease may
// therefore still write after the next holder began: check the fence where the data lives.
//
// A failed release costs that lock only. The locks a process holds with one lease length
// share one lease, so revoking it to be rid of one key would lose them all. Instead, a key
// whose deletion etcd did not confirm (a release's, or a waiter's after a failed wait) is
// deleted again in the background, with a backoff, until etcd confirms it or the lease ends
// (the key goes with it: within a TTL once etcd stops answering); meanwhile no goroutine of
// the process claims that lock again, so a late deletion cannot remove a newer claim. Only if
// etcd keeps the lease alive and still refuses the deletion for 30 s is the lease revoked,
// losing the process's locks under it, so that no one waits behind the key for ever.
//
// # Errors
//
//   - ErrNotObtained: the lock was held by others for the whole wait (busy);
//   - ErrUnavailable: etcd did not answer or could not serve (no quorum, no leader, all
//     members unreachable), as distinct from busy;
//   - ErrLost: the lock's lease ended while it was held;
//   - ErrClosed: the Client is closed.
//
// Compare them with errors.Is: they are returned wrapped with the reason.
//
// docs/deployment.md compares this lock with the Redis one, with figures from this machine.
package etcdlock
