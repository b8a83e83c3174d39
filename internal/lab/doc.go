// Package lab is teaching code: the locks of the oversell lab (docs/lab.md), from no lock at
// all, through the broken Redis locks the classic write-ups warn about, to the peer libraries,
// the project's own internal/dlock, etcd's lock (internal/etcdlock), the database as a lock (a
// PostgreSQL advisory lock, postgres.go) and ZooKeeper's (internal/zklock). A product reaches
// them only with strategy "lab"; no production strategy uses this package.
//
// Each lock is written the way its pitfall is usually met in real code, so that the lab's
// scenarios (a crowd, work longer than the lease, kill -9 and SIGSTOP of the holder) bring
// the flaw out with real processes and real faults. Nothing here fakes a failure: the one
// deliberate delay, ExpireGap between SETNX and EXPIRE, only widens a window that exists in
// the real code, the way think_ms widens the window between reading and writing the stock.
//
// Every value a Redis lock of the lab writes starts with the holder's Owner (its process id
// and a colon), so that the lab's runner can find the process that holds a product's lock
// and kill or pause exactly that one, as an operator reading Redis would. The etcd, postgres
// and zookeeper locks, whose keys name no process, write such a value to Redis as a name tag
// of their holder, which excludes nobody.
package lab
