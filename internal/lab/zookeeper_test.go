package lab_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
	"github.com/seckill/seckill/internal/zklock"
)

// zooKeeper starts a standalone ZooKeeper member for the test, stopped when it ends, and
// returns its servers (ZOOKEEPER_SERVERS's form).
func zooKeeper(t *testing.T) []string {
	t.Helper()
	return servers.ZooKeeperServers(servers.StartZooKeeper(t, 1))
}

// TestZooKeeperLockDiesWithItsSession: the zookeeper locks live as long as their ZooKeeper
// session. When the holder's session ends (here its client closes it; an expired session's
// nodes go the same way), the next claimant, in another process, holds at once, with a larger
// fence (zookeeper) or none (zookeeper-nofence), while the first holder is told nothing: its
// context goes on. Its late release fails without deleting the next holder's name tag.
func TestZooKeeperLockDiesWithItsSession(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	srv := zooKeeper(t)
	ctx := context.Background()
	for _, tc := range []struct {
		lock   string
		fenced bool
	}{{"zookeeper", true}, {"zookeeper-nofence", false}} {
		t.Run(tc.lock, func(t *testing.T) {
			first, second := zklock.New(srv, zklock.Options{}), zklock.New(srv, zklock.Options{})
			t.Cleanup(func() { first.Close(); second.Close() })
			key := prefix + ":{" + tc.lock + "}:lock"
			h, err := lab.New(rdb, lab.Clients{ZooKeeper: first}).Acquire(ctx, tc.lock, key, 2*time.Second, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Fence > 0; got != tc.fenced {
				t.Errorf("fence %d: fenced %v, want %v", h.Fence, got, tc.fenced)
			}
			l2 := lab.New(rdb, lab.Clients{ZooKeeper: second})
			if _, err := l2.Acquire(ctx, tc.lock, key, 2*time.Second, 100*time.Millisecond); !errors.Is(err, zklock.ErrNotObtained) {
				t.Fatalf("second acquire while held = %v, want zklock.ErrNotObtained", err)
			}
			_ = first.Close() // the holder's session ends; ZooKeeper deletes its node
			next, err := l2.Acquire(ctx, tc.lock, key, 2*time.Second, 5*time.Second)
			if err != nil {
				t.Fatalf("acquire once the holder's session ended: %v", err)
			}
			defer next.Release(ctx)
			if h.Ctx.Err() != nil {
				t.Errorf("the first holder was told of its loss (%v): want it told nothing", context.Cause(h.Ctx))
			}
			if tc.fenced && next.Fence <= h.Fence {
				t.Errorf("next holder's fence %d, want more than %d", next.Fence, h.Fence)
			}
			if err := h.Release(ctx); err == nil {
				t.Error("the late release of a lock whose session ended succeeded")
			}
			if v := rdb.Get(ctx, key).Val(); v != next.Token {
				t.Errorf("after the late release the name tag is %q, want the next holder's %q", v, next.Token)
			}
		})
	}
}

// TestZooKeeperLockWithoutZooKeeper: in a process that has no ZooKeeper, the zookeeper locks
// fail with an error that says ZooKeeper is unavailable and names ZOOKEEPER_SERVERS.
func TestZooKeeperLockWithoutZooKeeper(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	_, err := lab.New(rdb, lab.Clients{}).Acquire(context.Background(), "zookeeper", prefix+":{p:1}:lock", time.Second, time.Second)
	if !errors.Is(err, lab.ErrNoZooKeeper) || !errors.Is(err, zklock.ErrUnavailable) || errors.Is(err, zklock.ErrNotObtained) {
		t.Errorf("zookeeper lock without ZooKeeper = %v, want ErrNoZooKeeper, unavailable", err)
	}
}
