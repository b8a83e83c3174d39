// Package chaos holds seckill's fault tests. It has no code of its own outside its tests.
//
// Each test builds cmd/api once, starts real API processes against real PostgreSQL and
// Redis, runs a flash sale through HTTP with the typed client (internal/api/client), and
// breaks something in the middle: processes killed, paused or restarted; Redis restarted,
// failed over, slowed, cut off or its clock stepped; PostgreSQL restarted, slowed or cut;
// a silent network partition of one process; etcd's leader or quorum lost; reservation
// sweepers frozen or killed. docs/failures.md has a row per fault, with its command.
//
// Afterwards it audits the sale in PostgreSQL with internal/audit (orders == units sold,
// stock >= 0, no user with two orders, 201 <=> an order, no 500), checks that the sale sells
// out once the fault is gone, has every buyer retry once, and hands the history of every
// purchase to the linearizability checker of internal/history. The tests of the other lock
// shapes also log every committed write of the product row and check that each fence is
// above the one before (fencelog_test.go).
//
// Faults that stop or slow a server use servers of the test's own, never the shared ones.
// The tests skip with -short, without DATABASE_URL / REDIS_ADDR (and ETCD_ENDPOINTS), or
// without a binary they need; under SECKILL_REQUIRE_ALL=1 they fail instead.
//
//	make chaos                                   # just these tests, verbose
//	go test -race -count=1 -v ./internal/chaos/   # the same
package chaos
