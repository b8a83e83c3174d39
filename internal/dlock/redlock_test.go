package dlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// The tests of this file run a Redlock Client over three redis-server
// processes of their own (see servers_test.go), which they stop and restart.

// redlockSet is three independent Redis servers and a client of each.
type redlockSet struct {
	servers []*servers.Redis
	nodes   []redis.UniversalClient
}

func newRedlockSet(t *testing.T) *redlockSet {
	t.Helper()
	set := &redlockSet{}
	for range 3 {
		s := servers.StartRedis(t)
		set.servers = append(set.servers, s)
		set.nodes = append(set.nodes, s.Client())
	}
	return set
}

// client returns a Redlock Client over the set, closed at cleanup. Its node
// timeout is suiteNodeTimeout unless opt sets one: these tests are about what
// the lock does, not about how fast a loaded machine answers.
func (set *redlockSet) client(t *testing.T, opt *dlock.ClientOptions) *dlock.Client {
	t.Helper()
	var o dlock.ClientOptions
	if opt != nil {
		o = *opt
	}
	if o.NodeTimeout == 0 {
		o.NodeTimeout = suiteNodeTimeout
	}
	c := dlock.NewRedlock(set.nodes, &o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get returns the value of key on every node ("" where missing or down).
func (set *redlockSet) get(key string) []string {
	vals := make([]string, len(set.nodes))
	for i, n := range set.nodes {
		vals[i], _ = n.Get(context.Background(), key).Result()
	}
	return vals
}

func TestRedlockHoldsOnEveryNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	c := set.client(t, nil)
	l, err := c.Obtain(ctx, "rl:{a}:lock", 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Obtain returns once a majority has granted the lock and stores its
	// fence (the granting nodes below the largest fence are raised to it);
	// the last node's call may still be under way.
	var holding, fenced int
	for i, v := range set.get("rl:{a}:lock") {
		holding += boolInt(v == l.Token())
		f, _ := strconv.ParseInt(set.get("rl:{a}:lock:fence")[i], 10, 64)
		fenced += boolInt(f >= l.Fence())
	}
	if holding < 2 || fenced < 2 {
		t.Fatalf("%d nodes hold the token and %d store a fence >= %d, want a majority of 3", holding, fenced, l.Fence())
	}
	if ttl, err := l.TTL(ctx); err != nil || ttl < 9*time.Second {
		t.Fatalf("TTL = %v, %v; want about 10s", ttl, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Release returns once a majority has deleted the key; the last node's
	// call may still be under way.
	for deadline := time.Now().Add(10 * time.Second); strings.Join(set.get("rl:{a}:lock"), "") != ""; {
		if time.Now().After(deadline) {
			t.Fatalf("keys left 10s after Release: %q", set.get("rl:{a}:lock"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRedlockWorksWithOneNodeDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	c := set.client(t, nil)
	set.servers[0].Stop()
	var last int64
	for round := range 2 {
		for i := range 10 {
			f := cycle(t, c, "rl:{down}:lock")
			if f <= last {
				t.Fatalf("round %d, cycle %d: fence %d after %d", round, i, f, last)
			}
			last = f
		}
		l, err := c.Obtain(ctx, "rl:{down}:lock", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		wctx := l.Watch(ctx)
		time.Sleep(1500 * time.Millisecond) // several renewals, each by a majority
		if cause := context.Cause(wctx); cause != nil {
			t.Fatalf("round %d: watched context ended: %v", round, cause)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		set.servers[0].Start() // back, empty: it has forgotten every key
	}
}

func TestRedlockFailsCleanlyWithTwoNodesDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	c := set.client(t, nil)
	held, err := c.Obtain(ctx, "rl:{two}:held", 300*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx := held.Watch(ctx)
	set.servers[0].Stop()
	set.servers[1].Stop()

	start := time.Now()
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		_, err = c.Obtain(ctx, "rl:{two}:lock", time.Second, &dlock.Options{Wait: wait})
		if err == nil || errors.Is(err, dlock.ErrNotObtained) {
			t.Fatalf("Obtain (Wait %v) with 2 of 3 nodes down = %v, want a Redis error, not ErrNotObtained", wait, err)
		}
		t.Logf("Obtain (Wait %v) failed after %v: %v", wait, time.Since(start), err)
	}
	waitDone(t, wctx, time.Minute)
	if cause := context.Cause(wctx); !errors.Is(cause, dlock.ErrLost) {
		t.Fatalf("held lock: cause = %v, want ErrLost", cause)
	}

	set.servers[0].Start()
	set.servers[1].Start()
	cycle(t, c, "rl:{two}:lock")
}

// A lock outlives the loss of its key on a minority of nodes, not on a
// majority.
func TestRedlockLossNeedsAMajority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	l, err := set.client(t, nil).Obtain(ctx, "rl:{loss}:lock", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx := l.Watch(ctx)
	set.nodes[0].Del(ctx, l.Key())
	time.Sleep(1500 * time.Millisecond) // several renewals
	if cause := context.Cause(wctx); cause != nil {
		t.Fatalf("lost after deleting the key on 1 of 3 nodes: %v", cause)
	}
	set.nodes[1].Del(ctx, l.Key())
	waitDone(t, wctx, time.Minute)
	if cause := context.Cause(wctx); !errors.Is(cause, dlock.ErrLost) {
		t.Fatalf("cause = %v, want ErrLost", cause)
	}
}

// Each node mints fences from its own clock. A node an hour ahead must not
// make a later majority without it go back in time: the acquisition raises
// the other granting nodes to the largest fence.
func TestRedlockFencesIgnoreClockSkew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t)
	c := set.client(t, nil)
	ahead := time.Now().Add(time.Hour).UnixMicro()
	set.nodes[0].Set(ctx, "rl:{skew}:lock:fence", ahead, time.Hour)
	if f := cycle(t, c, "rl:{skew}:lock"); f != ahead+1 {
		t.Fatalf("fence = %d, want the fast node's %d", f, ahead+1)
	}
	set.servers[0].Stop()
	if f := cycle(t, c, "rl:{skew}:lock"); f <= ahead+1 {
		t.Fatalf("fence without the fast node = %d, want above %d", f, ahead+1)
	}
}

// Holders never overlap, and fences strictly increase, with several
// processes (Clients) competing, with every node up and with one down.
func TestRedlockMutualExclusion(t *testing.T) {
	t.Parallel()
	for _, down := range []int{0, 1} {
		t.Run(strconv.Itoa(down)+" down", func(t *testing.T) {
			t.Parallel()
			set := newRedlockSet(t)
			for _, s := range set.servers[:down] {
				s.Stop()
			}
			clients := []*dlock.Client{set.client(t, nil), set.client(t, nil), set.client(t, nil)}
			counter, fences := takeTurns(t, clients, "rl:{mx}:lock", 9, 15)
			if counter != 9*15 {
				t.Fatalf("counter = %d, want %d", counter, 9*15)
			}
			for i := 1; i < len(fences); i++ {
				if fences[i] <= fences[i-1] {
					t.Fatalf("fence %d = %d after %d: not increasing", i, fences[i], fences[i-1])
				}
			}
		})
	}
}

// takeTurns has workers goroutines, spread over clients, each obtain key
// rounds times and count under the lock. It returns the count and the fences
// in the order the holders had them.
func takeTurns(t *testing.T, clients []*dlock.Client, key string, workers, rounds int) (int, []int64) {
	var (
		wg      sync.WaitGroup
		holding atomic.Int32
		counter int // guarded by the lock itself
		fences  []int64
	)
	for i := range workers {
		wg.Go(func() {
			for range rounds {
				l, err := clients[i%len(clients)].Obtain(context.Background(), key, 2*time.Second,
					&dlock.Options{Wait: 30 * time.Second})
				if err != nil {
					t.Errorf("Obtain: %v", err)
					return
				}
				if holding.Add(1) != 1 {
					t.Error("two holders at once")
				}
				counter++
				fences = append(fences, l.Fence())
				holding.Add(-1)
				if err := l.Release(context.Background()); err != nil {
					t.Errorf("Release: %v", err)
				}
			}
		})
	}
	wg.Wait()
	return counter, fences
}

// With Wait 0, split votes may leave nobody with the lock, but never two.
func TestRedlockAtMostOneWinner(t *testing.T) {
	t.Parallel()
	set := newRedlockSet(t)
	clients := []*dlock.Client{set.client(t, nil), set.client(t, nil), set.client(t, nil)}
	var winners atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 60 {
		wg.Go(func() {
			<-start
			_, err := clients[i%3].Obtain(context.Background(), "rl:{one}:lock", 10*time.Second, nil)
			switch {
			case err == nil:
				winners.Add(1)
			case !errors.Is(err, dlock.ErrNotObtained):
				t.Errorf("Obtain: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := winners.Load(); n > 1 {
		t.Fatalf("winners = %d, want at most 1", n)
	}
}
