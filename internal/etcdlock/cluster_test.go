package etcdlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestQuorum, on three members of the test's own: with the leader killed, locks are had
// again once a new one is elected; with two of three stopped, a wait for a held lock ends in
// ErrUnavailable (down is not busy), the holder is told its lock is lost once its lease
// cannot be renewed, and once the members are back the lock is had with a larger fence.
func TestQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd cluster of its own")
	}
	ctx := context.Background()
	members := servers.StartEtcdCluster(t, 3)
	endpoints := servers.EtcdEndpoints(members)
	a, b := newClient(t, endpoints...), newClient(t, endpoints...)
	key := lockKey()
	servers.EtcdLeader(t, members).Stop()
	if err := a.Do(ctx, key, 2*time.Second, 10*time.Second, func(context.Context, *etcdlock.Lock) error { return nil }); err != nil {
		t.Fatalf("Do after the leader was killed: %v", err)
	}
	for _, m := range members {
		m.Start()
	}
	held, err := a.Obtain(ctx, key, 2*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	watched := held.Watch(ctx)
	// b has a session (a lease) before the outage, and waits for a held lock across it.
	if err := b.Do(ctx, lockKey(), 2*time.Second, time.Second, func(context.Context, *etcdlock.Lock) error { return nil }); err != nil {
		t.Fatal(err)
	}
	members[0].Stop() // two of three are down: no quorum, whichever was the leader
	members[1].Stop()
	start := time.Now()
	if _, err := b.Obtain(ctx, key, 2*time.Second, time.Second); !errors.Is(err, etcdlock.ErrUnavailable) || errors.Is(err, etcdlock.ErrNotObtained) {
		t.Errorf("Obtain without quorum = %v, want ErrUnavailable", err)
	}
	t.Logf("Obtain without quorum took %v", time.Since(start))
	select {
	case <-watched.Done():
		if cause := context.Cause(watched); !errors.Is(cause, etcdlock.ErrLost) {
			t.Errorf("the holder's context ended with %v, want ErrLost", cause)
		}
	case <-time.After(10 * time.Second):
		t.Error("the holder was not told of the loss within 10 s of losing quorum")
	}
	for _, m := range members {
		m.Start()
	}
	l, err := b.Obtain(ctx, key, 2*time.Second, 10*time.Second)
	if err != nil {
		t.Fatalf("Obtain once quorum is back: %v", err)
	}
	defer l.Release(ctx)
	if l.Fence() <= held.Fence() {
		t.Errorf("fence after the outage %d, want more than %d", l.Fence(), held.Fence())
	}
	if err := held.Release(ctx); !errors.Is(err, etcdlock.ErrLost) {
		t.Errorf("Release of the lost lock = %v, want ErrLost", err)
	}
}

// TestKilledWhileWaiting: a waiter whose only etcd is killed during its wait answers
// ErrUnavailable within its wait and a little more, although the concurrency package's
// removal of its key waits for etcd without a deadline; once etcd is back the key is had.
func TestKilledWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd of its own")
	}
	ctx := context.Background()
	member := servers.StartEtcd(t)
	a, b := newClient(t, member.ClientURL), newClient(t, member.ClientURL)
	key := lockKey()
	held, err := a.Obtain(ctx, key, 2*time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Do(ctx, lockKey(), 2*time.Second, time.Second, func(context.Context, *etcdlock.Lock) error { return nil }); err != nil {
		t.Fatal(err) // b has its session before the kill
	}
	time.AfterFunc(300*time.Millisecond, member.Stop)
	start := time.Now()
	_, err = b.Obtain(ctx, key, 2*time.Second, time.Second)
	took := time.Since(start)
	if !errors.Is(err, etcdlock.ErrUnavailable) {
		t.Errorf("Obtain while etcd was killed = %v, want ErrUnavailable", err)
	}
	if took > 2*time.Second {
		t.Errorf("Obtain while etcd was killed took %v, want about its wait (1 s)", took)
	}
	t.Logf("Obtain while etcd was killed: %v after %v", err, took)
	member.Start()
	_ = held.Release(ctx)
	l, err := b.Obtain(ctx, key, 2*time.Second, 10*time.Second)
	if err != nil {
		t.Fatalf("Obtain once etcd is back: %v", err)
	}
	_ = l.Release(ctx)
}
