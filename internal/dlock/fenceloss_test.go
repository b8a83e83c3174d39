package dlock_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// Fences strictly increase and never stall when Redis loses writes: the fence key gone, or
// present and older than the last fence given out. Each test mints fences on a redis-server of
// its own, makes it lose the last ones as the event would, and checks that the very next
// acquire's fence is above every fence minted before: PostgreSQL's check (`fence < $f`) holds
// the last one written, so a fence at or below it would be refused (and its holder would have to raise it).

// lossKey is the lock key of these tests.
const lossKey = "dlocktest:{loss}:lock"

// lossClient returns a client of s and a dlock Client on it.
func lossClient(t *testing.T, s *servers.Redis) (*redis.Client, *dlock.Client) {
	t.Helper()
	rdb := newRedisAt(t, s.Addr, nil)
	return rdb, newClient(t, rdb, nil)
}

// skipClusterSuite skips a test that starts servers of its own when the suite runs on a
// cluster: the single-node suite runs it.
func skipClusterSuite(t *testing.T) {
	t.Helper()
	if clusterAddrs() != nil {
		t.Skip("starts redis-servers of its own; runs in the single-node suite")
	}
}

// mintN obtains and releases lossKey n times on c and returns the fences.
func mintN(t *testing.T, c *dlock.Client, n int) []int64 {
	t.Helper()
	fences := make([]int64, n)
	for i := range fences {
		fences[i] = cycle(t, c, lossKey)
	}
	return fences
}

// assertFresh fails the test unless every fence of after is above every fence of before, and
// after increases.
func assertFresh(t *testing.T, before, after []int64) {
	t.Helper()
	last := slices.Max(before)
	for i, f := range after {
		if f <= last {
			t.Fatalf("fence %d after the loss = %d, not above %d (fences before the loss: %d)", i, f, last, before)
		}
		last = f
	}
}

// assertStale checks that the server came back with the fence key older than the last fence
// minted: the loss the test is about did happen.
func assertStale(t *testing.T, rdb *redis.Client, before []int64) {
	t.Helper()
	stale, err := rdb.Get(context.Background(), dlock.FenceKey(lossKey)).Int64()
	if err != nil {
		t.Fatalf("fence key after the loss: %v", err)
	}
	if last := slices.Max(before); stale >= last {
		t.Fatalf("fence key after the loss = %d, want below the last fence %d: no write was lost", stale, last)
	}
}

// TestFenceAfterFailoverToLaggingReplica: the master's replication to its replica goes
// through a proxy, frozen after some fences; the master mints more, which the replica misses;
// the replica is promoted. Its fences must be above all of the master's, though its fence key
// is present and stale.
func TestFenceAfterFailoverToLaggingReplica(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	master := servers.StartRedis(t, "--repl-diskless-sync-delay", "0") // syncs at once, not after 5 s
	link := faultproxy.New(t, "", master.Addr)
	replica := servers.StartRedisReplica(t, link.Addr())
	mrdb, mc := lossClient(t, master)
	before := mintN(t, mc, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := mrdb.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica = %d, %v", n, err)
	}
	link.Stall() // the replica misses what follows
	before = append(before, mintN(t, mc, 5)...)
	replica.Promote(t)
	rrdb, rc := lossClient(t, replica)
	assertStale(t, rrdb, before)
	assertFresh(t, before, mintN(t, rc, 3))
}

// TestFenceAfterRestartFromOlderSnapshot: Redis saves an RDB snapshot, mints more fences,
// crashes and comes back from the snapshot. The very next acquire passes the last fence
// minted, as PostgreSQL stores it: the product does not stall.
func TestFenceAfterRestartFromOlderSnapshot(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	s := servers.StartRedis(t)
	rdb, c := lossClient(t, s)
	before := mintN(t, c, 5)
	s.Do(t, 0, "SAVE")
	before = append(before, mintN(t, c, 28)...)
	s.Stop()
	s.Start()
	assertStale(t, rdb, before)
	assertFresh(t, before, mintN(t, c, 1))
}

// TestFenceAfterAOFLosesItsTail: with appendonly and appendfsync everysec, a power cut loses
// what was written in the last second and not yet synced. A test cannot cut the power, so it
// does that loss by hand: it notes the AOF's size after some fences, mints more, kills the
// server (which loses nothing by itself: the kernel keeps what was written) and truncates the
// AOF back to the noted size, at a command boundary, as the unsynced tail would be lost.
func TestFenceAfterAOFLosesItsTail(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	s := servers.StartRedis(t, "--appendonly", "yes", "--appendfsync", "everysec")
	rdb, c := lossClient(t, s)
	before := mintN(t, c, 5)
	aofs, err := filepath.Glob(filepath.Join(s.Dir, "appendonlydir", "*.incr.aof"))
	if err != nil || len(aofs) != 1 {
		t.Fatalf("incremental AOF files: %q, %v; want one", aofs, err)
	}
	synced, err := os.Stat(aofs[0])
	if err != nil {
		t.Fatal(err)
	}
	before = append(before, mintN(t, c, 5)...)
	s.Stop()
	if err := os.Truncate(aofs[0], synced.Size()); err != nil {
		t.Fatal(err)
	}
	s.Start()
	assertStale(t, rdb, before)
	assertFresh(t, before, mintN(t, c, 3))
}

// TestFenceAfterFenceKeyEvictedOrExpired: the fence key gone, by an eviction (an allkeys
// policy under maxmemory evicts every key) or by its expiry.
func TestFenceAfterFenceKeyEvictedOrExpired(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	s := servers.StartRedis(t)
	rdb, c := lossClient(t, s)
	ctx := context.Background()
	fenceKey := dlock.FenceKey(lossKey)
	before := mintN(t, c, 3)
	s.ConfigSet(t, "maxmemory-policy", "allkeys-random", "maxmemory", "1") // evicts at once
	s.ConfigSet(t, "maxmemory", "0")
	if n := rdb.Exists(ctx, fenceKey).Val(); n != 0 {
		t.Fatalf("fence key still there after the eviction")
	}
	if info := rdb.Info(ctx, "stats").Val(); strings.Contains(info, "evicted_keys:0\r") {
		t.Fatalf("nothing evicted:\n%s", info)
	}
	after := mintN(t, c, 3)
	assertFresh(t, before, after)

	before = after
	if err := rdb.PExpire(ctx, fenceKey, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the fence key to expire", func() bool {
		return rdb.Exists(ctx, fenceKey).Val() == 0
	})
	assertFresh(t, before, mintN(t, c, 3))
}

// TestFencePassesStoredFenceAfterStaleFenceKey: a fence key set back below the last fence (as
// a restore would leave it, 28 fences back), on the suite's Redis: the very next fence is
// above the last one, which PostgreSQL holds, instead of 28 acquisitions answering busy.
func TestFencePassesStoredFenceAfterStaleFenceKey(t *testing.T) {
	ctx := context.Background()
	rdb, c, key, fenceKey := taggedKey(t, "stale")
	stored := cycle(t, c, key)
	if err := rdb.Set(ctx, fenceKey, stored-28, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if f := cycle(t, c, key); f <= stored {
		t.Fatalf("fence after the fence key went back = %d, want above the stored %d", f, stored)
	}
}
