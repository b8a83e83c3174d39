// Package chaos holds seckill's fault tests. It has no code of its own outside its tests.
//
// Each test builds cmd/api once, starts real API processes against real PostgreSQL and
// Redis, runs a flash sale through HTTP with the typed client (internal/api/client), and
// breaks something in the middle: kill -9 of an API process, SIGSTOP of a lock holder past
// its lease, Redis restarted without persistence, Redis slow or unreachable behind a TCP
// proxy, PostgreSQL restarted, SIGTERM; and, with the product locks in etcd
// (LOCK_BACKEND=etcd), the etcd leader killed, the quorum lost and regained, a holder paused
// past its lease, a holder's statements held back until a newer holder wrote. Afterwards it
// audits the sale in PostgreSQL with internal/audit: orders == units sold, stock >= 0, no
// user with two orders, every 201 has its order and no order was answered with an error; no
// answer is a 500; the API's own audit agrees; and the sale sells out once the fault is gone.
//
// Faults that stop or slow a server use servers of the test's own (redis-server, a
// PostgreSQL cluster and a three-member etcd cluster on free loopback ports, or a TCP proxy
// in the test), never the shared ones. The tests skip without DATABASE_URL / REDIS_ADDR (and
// ETCD_ENDPOINTS, for those on the shared etcd), with -short, and when a binary they need
// (redis-server, etcd, PostgreSQL's initdb and postgres, root to run them as the postgres
// user) is missing.
//
//	make chaos                                   # just these tests, verbose
//	go test -race -count=1 -v ./internal/chaos/   # the same
package chaos
