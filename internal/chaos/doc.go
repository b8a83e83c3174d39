// Package chaos holds seckill's fault tests. It has no code of its own outside its tests.
//
// Each test builds cmd/api once, starts real API processes against real PostgreSQL and
// Redis, runs a flash sale through HTTP with the typed client (internal/api/client), and
// breaks something in the middle. docs/failures.md has a row per fault; they are:
//   - processes: kill -9 of an API process, SIGSTOP of a lock holder past its lease, of a
//     batch leader or a bundle purchase inside its transaction, of the process whose lock
//     cohort holds a lock, the death of a fair lock's head waiter, SIGTERM, and a rolling
//     restart of three processes behind HAProxy (deploy/haproxy/haproxy.cfg);
//   - Redis: restarted without persistence, or from an RDB snapshot taken mid-sale, or with
//     AOF everysec's last second cut; a Sentinel failover to a replica that missed the last
//     writes; its host's clock stepped back and forward (libfaketime); slow or unreachable
//     behind a TCP proxy; error replies; Redlock masters killed and frozen;
//   - PostgreSQL: restarted, slow, its connections cut with COMMITs in flight;
//   - the network: a silent partition (packets dropped, no RST, no ICMP) of one process, run
//     in a network namespace of its own, from Redis or from PostgreSQL, then healed;
//   - etcd (LOCK_BACKEND=etcd): the leader killed, the quorum lost and regained, a holder
//     paused past its lease, a holder's statements held back until a newer holder wrote;
//   - reservations (products with pay_within_ms): a sweeping process frozen and one killed
//     mid-sweep, one killed between a return's COMMIT and the gate, Redis and PostgreSQL restarted mid-return, with payments and cancels racing
//     the sweepers at pay_by; after a drain, stock + paid == initial_stock with every ended
//     reservation's unit returned once (reservation_test.go and its resv*_test.go harness).
//
// Afterwards it audits the sale in PostgreSQL with internal/audit: orders == units sold,
// stock >= 0, no user with two orders, every 201 has its order and no order was answered with
// an error; no answer is a 500; the API's own audit agrees; and the sale sells out once the
// fault is gone. Every buyer then retries once, and the history of every purchase, each with
// the time it was sent and answered, goes to the linearizability checker of internal/history.
// The tests of the locks of other shapes also log every committed write of the product row
// (fencelog_test.go) and check that each one's fence is above the one before.
//
// Faults that stop or slow a server use servers of the test's own (redis-server, a Redis
// Sentinel deployment, a PostgreSQL cluster and a three-member etcd cluster on free loopback
// ports, or a TCP proxy in the test), never the shared ones. The tests skip without DATABASE_URL / REDIS_ADDR (and
// ETCD_ENDPOINTS, for those on the shared etcd), with -short, and when a binary they need
// (redis-server, etcd, PostgreSQL's initdb and postgres, root to run them as the postgres
// user) is missing.
//
//	make chaos                                   # just these tests, verbose
//	go test -race -count=1 -v ./internal/chaos/   # the same
package chaos
