// Package etcdlock takes product locks in etcd, the consensus alternative to the Redis locks
// of internal/dlock, with the same contract where it applies: obtain with a wait and a
// context, a lease kept alive while the lock is held, loss reported by cancelling the
// holder's context with ErrLost, release, and a fencing token (the lock key's create
// revision, which grows with every write to etcd).
//
// It is built on the official client's concurrency.Session, a lease per process and lease
// length. A lock is a key under the lock's name written with that lease; the key created
// first holds the lock, so waiters are served in the order they came. mutex.go writes the
// concurrency package's Mutex protocol again, for two faults measured (docs/dependencies.md).
// A holder paused past its lease may still write after the next holder began: check the
// fence where the data lives.
//
// Compare errors with errors.Is: they are returned wrapped with the reason.
//
//   - ErrNotObtained: the lock was held by others for the whole wait (busy);
//   - ErrUnavailable: etcd did not answer or could not serve (no quorum, no leader, all
//     members unreachable), as distinct from busy;
//   - ErrLost: the lock's lease ended while it was held;
//   - ErrClosed: the Client is closed.
//
// docs/deployment.md#product-locks-in-etcd says what it guarantees, why a failed release
// costs one lock only, and how it compares with the Redis lock, with figures.
package etcdlock
