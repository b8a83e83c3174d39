package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
	"github.com/seckill/seckill/internal/zklock"
)

// TestEnsembleFaults, on three members of the test's own: with the leader killed, a lock is
// had again once a new one is elected, with a larger fence; a holder whose only member is
// frozen (SIGSTOP) is told its lock is lost (suspended) within its session timeout, while its
// session expires and another process takes the lock with a larger fence.
func TestEnsembleFaults(t *testing.T) {
	testenv.SkipShort(t, "a ZooKeeper ensemble of its own")
	ctx := context.Background()
	members := servers.StartZooKeeper(t, 3)
	all := servers.ZooKeeperServers(members)
	a := newClient(t, all)
	key := lockKey()
	first, err := a.Obtain(ctx, key, 2*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = first.Release(ctx)

	leader := servers.ZooKeeperLeader(t, members)
	start := time.Now()
	leader.Stop()
	l, err := a.Obtain(ctx, key, 2*time.Second, 15*time.Second)
	if err != nil {
		t.Fatalf("Obtain after the leader was killed: %v", err)
	}
	t.Logf("lock had %v after the leader (member %d) was killed", time.Since(start).Round(time.Millisecond), leader.ID)
	if l.Fence() <= first.Fence() {
		t.Errorf("fence after the new election %d, want more than %d", l.Fence(), first.Fence())
	}
	_ = l.Release(ctx)
	leader.Start()

	// A holder connected to one member only, which is frozen.
	var only *servers.ZooKeeper
	for _, m := range members {
		if m.Mode() == "follower" {
			only = m
		}
	}
	h := newClient(t, []string{only.Addr})
	b := newClient(t, all)
	held, err := h.Obtain(ctx, key, 2*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	watched := held.Watch(ctx)
	only.Pause()
	defer only.Resume()
	start = time.Now()
	select {
	case <-watched.Done():
		if cause := context.Cause(watched); !errors.Is(cause, zklock.ErrLost) {
			t.Errorf("the holder's context ended with %v, want ErrLost", cause)
		}
		t.Logf("the holder was told of the loss %v after its member froze: %v", time.Since(start).Round(time.Millisecond), context.Cause(watched))
	case <-time.After(5 * time.Second):
		t.Fatal("the holder was not told of the loss within 5 s of its member freezing")
	}
	next, err := b.Obtain(ctx, key, 2*time.Second, 10*time.Second)
	if err != nil {
		t.Fatalf("Obtain by another process once the frozen holder's session expired: %v", err)
	}
	t.Logf("another process had the lock %v after the holder's member froze", time.Since(start).Round(time.Millisecond))
	if next.Fence() <= held.Fence() {
		t.Errorf("fence of the next holder %d, want more than %d", next.Fence(), held.Fence())
	}
	if err := held.Release(ctx); !errors.Is(err, zklock.ErrLost) {
		t.Errorf("Release of the lost lock = %v, want ErrLost", err)
	}
	_ = next.Release(ctx)
}
