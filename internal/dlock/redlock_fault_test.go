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
)

// A hung node (it accepts connections and commands but never answers) costs
// each acquisition the node timeout, not a failure, and a held lock stays
// held.
func TestRedlockToleratesAHungNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t, 0)
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
	keptFor(t, l.Watch(ctx), 1500*time.Millisecond, "with a hung minority")
	mustRelease(t, l)
}

// A release is published on every node that held the key, so a waiter is
// woken even when one node is down.
func TestRedlockWaiterWokenByRelease(t *testing.T) {
	t.Parallel()
	set := newRedlockSet(t, 1)
	holder := mustObtain(t, set.client(t, nil), "rl:{wake}:lock", time.Minute, nil)
	// Once the waiter has found the key held it waits a minute, unless woken.
	obtainWoken(t, set.client(t, &dlock.ClientOptions{Observer: releaseAtContention(holder)}), "rl:{wake}:lock")
}

// Every attempt after the first uses a token of its own, so that a late
// reply to an abandoned attempt cannot touch the lock; Token is the value
// the nodes hold.
func TestRedlockRetryGetsItsOwnToken(t *testing.T) {
	t.Parallel()
	set := newRedlockSet(t, 0)
	holder := mustObtain(t, set.client(t, nil), "rl:{tok}:lock", time.Minute, nil)
	// The holder lets go once the waiter's first attempt found the key held.
	waiter := set.client(t, &dlock.ClientOptions{Observer: releaseAtContention(holder)})
	l := mustObtain(t, waiter, "rl:{tok}:lock", time.Minute, &dlock.Options{Wait: time.Minute, Token: "waiter"})
	defer l.Release(context.Background())
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

// releaseAtContention returns an Observer that releases holder, in a
// goroutine of its own, at the first Contended event it sees: once the
// waiter it observes has found the key held.
func releaseAtContention(holder *dlock.Lock) dlock.Observer {
	return &contentionRelease{holder: holder}
}

// contentionRelease is the Observer of releaseAtContention.
type contentionRelease struct {
	dlock.NopObserver
	once   sync.Once
	holder *dlock.Lock
}

func (r *contentionRelease) Contended(string) {
	r.once.Do(func() { go func() { _ = r.holder.Release(context.Background()) }() })
}

// BenchmarkRedlockObtainRelease is one uncontended Obtain and Release on
// three local nodes; rtt-us and rtts/op count PINGs to one node.
func BenchmarkRedlockObtainRelease(b *testing.B) {
	set := newRedlockSet(b, 0)
	c := dlock.NewRedlock(set.nodes, nil)
	b.Cleanup(func() { _ = c.Close() })
	benchObtainRelease(b, set.nodes[0], c, "bench:{rl}:lock")
}

// BenchmarkRedlockContended is BenchmarkContended/clients=4 on three local
// nodes, with every node up and with one down.
func BenchmarkRedlockContended(b *testing.B) {
	for _, down := range []int{0, 1} {
		b.Run(fmt.Sprintf("down=%d", down), func(b *testing.B) {
			set := newRedlockSet(b, down)
			clients := make([]*dlock.Client, 4)
			for i := range clients {
				clients[i] = dlock.NewRedlock(set.nodes, nil)
				b.Cleanup(func() { _ = clients[i].Close() })
			}
			benchHandoffs(b, clients, "bench:{rlc}:lock", (*dlock.Client).Obtain)
		})
	}
}
