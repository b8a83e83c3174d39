// Package zklock takes product locks in ZooKeeper, the coordination-service alternative to
// the Redis locks of internal/dlock and the etcd ones of internal/etcdlock, with the same
// contract: obtain with a wait and a context, loss reported by cancelling the holder's
// context with ErrLost, release, and a fencing token.
//
// It follows the lock recipe of ZooKeeper's documentation and Curator's InterProcessMutex:
// each claim is an ephemeral sequential node under the lock's own parent (a container node,
// which ZooKeeper removes once empty); the node with the lowest sequence holds the lock, and
// every other waiter watches only the node just before its own, so a release wakes one
// waiter, not the herd. Waiters are served in the order they came. The node's name carries a
// random id (Curator's "protected" mode), so that a claim whose answer was lost is found
// again, and removed, rather than left to hold the lock for nobody.
//
// The fence is the lock node's creation zxid (Stat.Czxid): ZooKeeper orders every write of
// the ensemble by zxid, and a later holder's node was created after an earlier holder's, so
// its fence is larger, as with etcd's create revision.
//
// A lock lives as long as its ZooKeeper session. The Client keeps one session (one TCP
// connection, kept alive by the client library's pings) per session timeout; the ensemble
// expires a session it has not heard from for that long and deletes its nodes, handing the
// lock to the next waiter. The holder is told at the first sign: when its connection is lost
// (Curator's SUSPENDED: the session may live on, or may already be gone) as when it learns
// that the session expired, its watched context ends with ErrLost. A holder paused past its
// session timeout learns it only once it runs again, and may still write before: check the
// fence where the data lives (docs/dlock.md).
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
