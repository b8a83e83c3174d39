package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// The tests of this file run a Redlock Client over three redis-server
// processes of their own (internal/testenv/servers), which they stop and restart.

// redlockSet is three independent Redis servers and a client of each.
type redlockSet struct {
	servers []*servers.Redis
	nodes   []redis.UniversalClient
}

// newRedlockSet starts three Redis servers, stopped at cleanup, and stops the
// first down of them: down nodes are back, empty, once Started again.
func newRedlockSet(t testing.TB, down int) *redlockSet {
	t.Helper()
	set := &redlockSet{}
	for i := range 3 {
		s := servers.StartRedis(t)
		set.servers = append(set.servers, s)
		set.nodes = append(set.nodes, s.Client())
		if i < down {
			s.Stop()
		}
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
	set := newRedlockSet(t, 0)
	l := mustObtain(t, set.client(t, nil), "rl:{a}:lock", 10*time.Second, nil)
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
	mustRelease(t, l)
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
	set := newRedlockSet(t, 1)
	c := set.client(t, nil)
	var last int64
	for round := range 2 {
		for i := range 10 {
			f := cycle(t, c, "rl:{down}:lock")
			if f <= last {
				t.Fatalf("round %d, cycle %d: fence %d after %d", round, i, f, last)
			}
			last = f
		}
		l := mustObtain(t, c, "rl:{down}:lock", time.Second, nil)
		// several renewals, each by a majority
		keptFor(t, l.Watch(ctx), 1500*time.Millisecond, fmt.Sprintf("in round %d", round))
		mustRelease(t, l)
		set.servers[0].Start() // back, empty: it has forgotten every key
	}
}

func TestRedlockFailsCleanlyWithTwoNodesDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t, 0)
	c := set.client(t, nil)
	wctx := mustObtain(t, c, "rl:{two}:held", 300*time.Millisecond, nil).Watch(ctx)
	set.servers[0].Stop()
	set.servers[1].Stop()

	start := time.Now()
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		_, err := c.Obtain(ctx, "rl:{two}:lock", time.Second, &dlock.Options{Wait: wait})
		if err == nil || errors.Is(err, dlock.ErrNotObtained) {
			t.Fatalf("Obtain (Wait %v) with 2 of 3 nodes down = %v, want a Redis error, not ErrNotObtained", wait, err)
		}
		t.Logf("Obtain (Wait %v) failed after %v: %v", wait, time.Since(start), err)
	}
	waitLost(t, wctx, time.Minute) // the held lock

	set.servers[0].Start()
	set.servers[1].Start()
	cycle(t, c, "rl:{two}:lock")
}

// A lock outlives the loss of its key on a minority of nodes, not on a
// majority.
func TestRedlockLossNeedsAMajority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t, 0)
	l := mustObtain(t, set.client(t, nil), "rl:{loss}:lock", time.Second, nil)
	wctx := l.Watch(ctx)
	set.nodes[0].Del(ctx, l.Key())
	keptFor(t, wctx, 1500*time.Millisecond, "after deleting the key on 1 of 3 nodes")
	set.nodes[1].Del(ctx, l.Key())
	waitLost(t, wctx, time.Minute)
}

// Each node mints fences from its own clock. A node an hour ahead must not
// make a later majority without it go back in time: the acquisition raises
// the other granting nodes to the largest fence.
func TestRedlockFencesIgnoreClockSkew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t, 0)
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
			set := newRedlockSet(t, down)
			clients := []*dlock.Client{set.client(t, nil), set.client(t, nil), set.client(t, nil)}
			takeTurns(t, clients, "rl:{mx}:lock", 2*time.Second, 9, 15)
		})
	}
}

// With Wait 0, split votes may leave nobody with the lock, but never two.
func TestRedlockAtMostOneWinner(t *testing.T) {
	t.Parallel()
	set := newRedlockSet(t, 0)
	clients := []*dlock.Client{set.client(t, nil), set.client(t, nil), set.client(t, nil)}
	if n := len(obtainAtOnce(t, clients, "rl:{one}:lock", 60)); n > 1 {
		t.Fatalf("winners = %d, want at most 1", n)
	}
}
