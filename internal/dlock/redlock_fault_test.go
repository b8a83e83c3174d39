package dlock_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// A hung node (it accepts connections and commands but never answers) costs
// each acquisition the node timeout, not a failure, and a held lock stays
// held.
func TestRedlockToleratesAHungNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	p := faultproxy.New(t, "", set.servers[0].Addr)
	hung := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = hung.Close() })
	nodes := []redis.UniversalClient{hung, set.nodes[1], set.nodes[2]}
	c := dlock.NewRedlock(nodes, &dlock.ClientOptions{NodeTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	p.Stall()

	start := time.Now()
	l, err := c.Obtain(ctx, "rl:{hung}:lock", time.Second, nil)
	if err != nil {
		t.Fatalf("Obtain with 1 of 3 nodes hung: %v", err)
	}
	t.Logf("Obtain took %v with a 100ms node timeout", time.Since(start))
	wctx := l.Watch(ctx)
	time.Sleep(1500 * time.Millisecond)
	if cause := context.Cause(wctx); cause != nil {
		t.Fatalf("watched context ended with a hung minority: %v", cause)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A release is published on every node that held the key, so a waiter is
// woken even when one node is down.
func TestRedlockWaiterWokenByRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	set.servers[0].Stop()
	holder, err := set.client(t, nil).Obtain(ctx, "rl:{wake}:lock", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed := &firstContention{seen: make(chan struct{})}
	go func() {
		<-failed.seen // the waiter found the key held and now waits a minute, unless woken
		_ = holder.Release(ctx)
	}()
	slow := &dlock.Options{Wait: 10 * time.Second, MinBackoff: time.Minute, MaxBackoff: time.Minute}
	start := time.Now()
	l, err := set.client(t, &dlock.ClientOptions{Observer: failed}).Obtain(ctx, "rl:{wake}:lock", time.Second, slow)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	t.Logf("woken %v after the wait began", time.Since(start))
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Every attempt after the first uses a token of its own, so that a late
// reply to an abandoned attempt cannot touch the lock; Token is the value
// the nodes hold.
func TestRedlockRetryGetsItsOwnToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	holder, err := set.client(t, nil).Obtain(ctx, "rl:{tok}:lock", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed := &firstContention{seen: make(chan struct{})}
	go func() {
		<-failed.seen // the waiter's first attempt found the key held
		_ = holder.Release(ctx)
	}()
	l, err := set.client(t, &dlock.ClientOptions{Observer: failed}).Obtain(ctx, "rl:{tok}:lock", time.Minute,
		&dlock.Options{Wait: time.Minute, Token: "waiter"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if !strings.HasPrefix(l.Token(), "waiter.") {
		t.Fatalf("Token = %q, want waiter.<attempt>", l.Token())
	}
	var holding int
	for _, v := range set.get("rl:{tok}:lock") {
		holding += boolInt(v == l.Token())
	}
	if holding < 2 {
		t.Fatalf("%d of 3 nodes hold %q", holding, l.Token())
	}
}

// firstContention closes seen at the first Contended event.
type firstContention struct {
	dlock.NopObserver
	once sync.Once
	seen chan struct{}
}

func (f *firstContention) Contended(string) { f.once.Do(func() { close(f.seen) }) }

// BenchmarkRedlockObtainRelease is one uncontended Obtain and Release on
// three local nodes; rtt-us and rtts/op count PINGs to one node.
func BenchmarkRedlockObtainRelease(b *testing.B) {
	ctx := context.Background()
	var nodes []redis.UniversalClient
	for range 3 {
		nodes = append(nodes, servers.StartRedis(b).Client())
	}
	c := dlock.NewRedlock(nodes, nil)
	b.Cleanup(func() { _ = c.Close() })
	benchWithFloor(b, nodes[0], func() error {
		l, err := c.Obtain(ctx, "bench:{rl}:lock", time.Second, nil)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	})
}

// BenchmarkRedlockContended is BenchmarkContended/clients=4 on three local
// nodes, with every node up and with one down.
func BenchmarkRedlockContended(b *testing.B) {
	for _, down := range []int{0, 1} {
		b.Run(fmt.Sprintf("down=%d", down), func(b *testing.B) {
			var nodes []redis.UniversalClient
			for i := range 3 {
				s := servers.StartRedis(b)
				nodes = append(nodes, s.Client())
				if i < down {
					s.Stop()
				}
			}
			clients := make([]*dlock.Client, 4)
			for i := range clients {
				clients[i] = dlock.NewRedlock(nodes, nil)
				b.Cleanup(func() { _ = clients[i].Close() })
			}
			benchHandoffs(b, clients, "bench:{rlc}:lock", (*dlock.Client).Obtain)
		})
	}
}
