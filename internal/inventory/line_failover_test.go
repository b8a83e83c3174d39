package inventory_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLineAfterFailoverToLaggingReplica measures what a Redis failover costs a line
// (docs/failures.md#the-line-and-a-redis-failover): the master's replication goes through a
// proxy, stalled after 20 joins were replicated; 10 more joins are acknowledged by the master
// only; the replica is promoted. The 20 keep their draws, hence their order among themselves;
// the 10 are not in line, and joining again before the start draws each a new place. It also
// times 500 joins with and without WAIT 1 on a live replica, and logs both.
func TestLineAfterFailoverToLaggingReplica(t *testing.T) {
	master := servers.StartRedis(t, "--repl-diskless-sync-delay", "0")
	link := faultproxy.New(t, "", master.Addr)
	replica := servers.StartRedisReplica(t, link.Addr())
	ctx := context.Background()
	keys := inventory.Keys{Prefix: "failover"}
	mrdb := master.Client()
	l := inventory.NewLine(mrdb, keys)
	now, err := mrdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := lineProduct(1, now.Add(time.Hour), 100, 30_000)

	joinAll := func(l *inventory.Line, p inventory.Product, from, to int64) {
		for u := from; u <= to; u++ {
			if _, err := l.Join(ctx, p, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	joinAll(l, p, 1, 20)
	if n, err := mrdb.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica = %d, %v", n, err)
	}
	kept := mrdb.ZRangeWithScores(ctx, keys.Line(p.ID), 0, -1).Val()
	link.Stall()
	joinAll(l, p, 21, 30)
	if n := mrdb.ZCard(ctx, keys.Line(p.ID)).Val(); n != 30 {
		t.Fatalf("master's line: %d places, want 30", n)
	}
	replica.Promote(t)
	rrdb := replica.Client()
	after := inventory.NewLine(rrdb, keys)
	if got := rrdb.ZRangeWithScores(ctx, keys.Line(p.ID), 0, -1).Val(); !slices.Equal(got, kept) {
		t.Fatalf("after the failover the line is %v, want the 20 replicated places, same draws %v", got, kept)
	}
	lost := 0
	for u := int64(21); u <= 30; u++ {
		if pl, err := after.Peek(ctx, p, u); err != nil || pl.State != inventory.NotInLine {
			t.Fatalf("user %d after the failover: %+v, %v; want not_in_line", u, pl, err)
		}
		lost++
	}
	joinAll(after, p, 21, 30) // they come back: a new draw each, as good as the lost one
	if n := rrdb.ZCard(ctx, keys.Line(p.ID)).Val(); n != 30 {
		t.Fatalf("after the rejoins: %d places, want 30", n)
	}
	t.Logf("failover to a replica that missed 10 acknowledged joins: %d lost, the 20 replicated kept their draws", lost)

	// The price of WAIT 1 per join, on a master with a live replica (the link flowing).
	m2 := servers.StartRedis(t, "--repl-diskless-sync-delay", "0")
	servers.StartRedisReplica(t, m2.Addr)
	r2 := m2.Client()
	l2 := inventory.NewLine(r2, keys)
	join := func(u int64, wait bool) time.Duration {
		start := time.Now()
		if _, err := l2.Join(ctx, p, u); err != nil {
			t.Fatal(err)
		}
		if wait {
			if n, err := r2.Do(ctx, "WAIT", 1, 1000).Int(); err != nil || n != 1 {
				t.Fatalf("WAIT = %d, %v", n, err)
			}
		}
		return time.Since(start)
	}
	join(0, true) // the script loaded, the connection open
	var alone, waited []time.Duration
	for u := int64(1); u <= 500; u++ { // alternated, so both see the same load
		alone = append(alone, join(2*u, false))
		waited = append(waited, join(2*u+1, true))
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	t.Logf("a join's median over 500: %s alone, %s with WAIT 1", median(alone), median(waited))
}
