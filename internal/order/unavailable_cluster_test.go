package order_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestIsUnavailableCluster: on Redis Cluster nodes of the test's own, CLUSTERDOWN (a node
// that serves no slot) and TRYAGAIN (the lock's and the gate's keys in a slot being
// migrated, only some of them still on the source node) count as unavailable, and so do
// MOVED and ASK when they reach the caller (a cluster client gives up after following a few,
// when nodes disagree on a slot's owner mid-reshard: TestRedisErrorRepliesCluster met it);
// CROSSSLOT is a bug.
func TestIsUnavailableCluster(t *testing.T) {
	testenv.SkipShort(t, "a Redis Cluster")
	t.Parallel()
	keys := inventory.Keys{Prefix: "cluster"}
	lockAndGate := func(t *testing.T, addr, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer rdb.Close()
		locks := dlock.New(rdb, nil)
		defer locks.Close()
		_, lockErr := locks.Obtain(ctx, keys.Lock(1), time.Second, nil)
		for _, err := range []error{lockErr, inventory.NewGate(rdb, keys).Admit(ctx, 1, 7, "attempt", time.Minute)} {
			checkUnavailable(t, err, want, true)
		}
	}

	t.Run("no slots", func(t *testing.T) {
		t.Parallel()
		node := servers.StartRedis(t, "--cluster-enabled", "yes")
		lockAndGate(t, node.Addr, "CLUSTERDOWN ")
	})

	t.Run("slot migrating", func(t *testing.T) {
		t.Parallel()
		nodes := servers.StartRedisCluster(t, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		slot := nodes[0].Client().ClusterKeySlot(ctx, keys.Lock(1)).Val()
		src, dst := nodes[slot*2/16384], nodes[1-slot*2/16384] // StartRedisCluster halves the slots
		rdb := src.Client()
		// The gate's stock and the lock's fence exist; the lock and the gate's buyers do not.
		if _, err := inventory.NewGate(rdb, keys).StartSeeding(1).Publish(ctx, inventory.SeedInit, 10); err != nil {
			t.Fatal(err)
		}
		locks := dlock.New(rdb, nil)
		defer locks.Close()
		l, err := locks.Obtain(ctx, keys.Lock(1), time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		srcID, dstID := rdb.ClusterMyID(ctx).Val(), dst.Client().ClusterMyID(ctx).Val()
		mustDo(t, dst.Client(), "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
		mustDo(t, rdb, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
		lockAndGate(t, src.Addr, "TRYAGAIN ")

		for _, c := range []struct {
			want        string
			err         error
			unavailable bool
		}{
			{"CROSSSLOT ", rdb.Eval(ctx, "return 1", []string{"{a}1", "{b}2"}).Err(), false},
			{"MOVED ", dst.Client().Get(ctx, keys.GateStock(1)).Err(), true},
			{"ASK ", rdb.Get(ctx, keys.Lock(1)).Err(), true}, // released: not on the source any more
		} {
			if c.err != nil && !strings.HasPrefix(c.err.Error(), c.want) {
				t.Errorf("err = %v, want one that starts with %q", c.err, c.want)
			}
			checkUnavailable(t, c.err, c.want, c.unavailable)
		}
	})
}
