// Package zklock takes product locks in ZooKeeper, the coordination-service alternative to
// the Redis locks of internal/dlock and the etcd ones of internal/etcdlock, with the same
// contract: obtain with a wait and a context, loss reported by cancelling the holder's
// context with ErrLost, release, and a fencing token.
//
// Each claim is an ephemeral sequential node under the lock's own parent; the lowest node
// holds, each waiter watches only the node before its own, and waiters are served in the order
// they came. The fence is the lock node's creation zxid (Stat.Czxid). A lock lives as long as
// the Client's ZooKeeper session: when the connection is lost or the session expires, the
// holder's watched context ends with ErrLost. A holder paused past its session timeout learns it
// only once it runs again, so check the fence where the data lives. The recipe and its limits:
// docs/dlock.md, "Which lock service".
//
// # Errors
//
//   - ErrNotObtained: the lock was held by others for the whole wait (busy);
//   - ErrUnavailable: ZooKeeper did not answer or could not serve (no session, no quorum),
//     as distinct from busy;
//   - ErrLost: the lock's session was suspended or expired while the lock was held;
//   - ErrClosed: the Client is closed.
//
// Compare them with errors.Is: they are returned wrapped with the reason.
package zklock
