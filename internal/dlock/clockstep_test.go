package dlock_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// The Redis server's wall clock stepped under the lock, for real: each test runs a
// redis-server of its own under libfaketime (servers.StartRedisFakeClock) and steps its clock
// by a few seconds, as NTP or an operator steps a host's clock. Redis expires keys by that
// clock, and the scripts read it with TIME: fences, leases and the fair queue's places all
// depend on it. docs/dlock.md ("Clock steps") has the figures these tests log.

// clockKey is the lock key of these tests, on servers of their own.
const clockKey = "dlocktest:{clock}:lock"

// TestFencesAcrossClockSteps: fences keep increasing when the server's clock steps back (the
// last fence + 1 carries them until the clock passes it again) and jump ahead with a step
// forward. Only a step back together with the loss of the fence key can give a smaller fence
// (docs/dlock.md, "the margin"): the control at the end shows that limit.
func TestFencesAcrossClockSteps(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	s, clock := servers.StartRedisFakeClock(t)
	_, c := lossClient(t, s)
	fences := mintN(t, c, 3)
	clock.Step(t, -5*time.Second)
	back := mintN(t, c, 3)
	assertFresh(t, fences, back)
	if skew := clock.Skew(t); back[0]-fences[2] > 1000 {
		t.Errorf("first fence after a step of -5s (clock %v off) = last + %d µs, want last + 1: carried", skew, back[0]-fences[2])
	}
	clock.Step(t, 10*time.Second)
	ahead := mintN(t, c, 3)
	assertFresh(t, back, ahead)
	if jump := time.Duration(ahead[0]-back[2]) * time.Microsecond; jump < 4*time.Second {
		t.Errorf("first fence after a step of +10s (net +5s) is %v past the last, want about 5s", jump)
	}
	clock.Step(t, -5*time.Second) // back to the real clock: carried again
	assertFresh(t, ahead, mintN(t, c, 3))
	t.Logf("step -5s: fences went on at last+1 (%d, %d, %d); step +10s: the next fence jumped %v ahead",
		back[0]-fences[2], back[1]-back[0], back[2]-back[1], time.Duration(ahead[0]-back[2])*time.Microsecond)

	// The control, on a server of its own: a step back, then the fence key lost (a restart
	// without persistence): the clock now mints a fence below the last one, by the step. That
	// is the margin the docs state.
	s, clock = servers.StartRedisFakeClock(t)
	_, c = lossClient(t, s)
	last := cycle(t, c, clockKey)
	clock.Step(t, -5*time.Second)
	s.Stop()
	s.Start()
	if lower := cycle(t, c, clockKey); lower >= last {
		t.Errorf("fence after a step of -5s and a restart without persistence = %d, last %d: the control expected it below", lower, last)
	} else {
		t.Logf("step -5s, then the fence key lost: the next fence is %v below the last one", time.Duration(last-lower)*time.Microsecond)
	}
}

// TestLeaseAcrossClockStepForward: a step forward shortens every lease by the step, since
// Redis expires the key by its wall clock. A step longer than the lease's time left frees the
// key at once: another client takes it, with a larger fence, while the holder's own deadline
// (its process's monotonic clock) is still seconds away. The holder's watchdog finds its
// token gone at its next renewal (ttl/3) and cancels the watched context with ErrLost.
func TestLeaseAcrossClockStepForward(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	s, clock := servers.StartRedisFakeClock(t)
	_, c := lossClient(t, s)
	_, other := lossClient(t, s)
	ctx := context.Background()
	const ttl = 3 * time.Second
	held := mustObtain(t, c, clockKey, ttl, nil)
	wctx := held.Watch(ctx)
	time.Sleep(100 * time.Millisecond)
	stepped := clock.Step(t, 5*time.Second)
	second := mustObtain(t, other, clockKey, ttl, &dlock.Options{Wait: ttl})
	took := time.Since(stepped)
	defer mustRelease(t, second)
	if left := time.Until(held.Deadline()); left < time.Second {
		t.Errorf("the first holder's deadline is %v away when the second holder got the key, want over a second", left)
	}
	if second.Fence() <= held.Fence() {
		t.Errorf("second holder's fence %d <= first holder's %d", second.Fence(), held.Fence())
	}
	early := time.Until(held.Deadline())
	waitLost(t, wctx, ttl)
	t.Logf("step +5s under a %v lease: another client got the key %v after the step, %v before the first "+
		"holder's deadline; the first holder's watchdog reported the loss %v after the step",
		ttl, took.Round(time.Microsecond), early.Round(time.Millisecond), time.Since(stepped).Round(time.Millisecond))
	if err := held.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Errorf("Release of the lost lock = %v, want ErrNotHeld", err)
	}
}

// TestLeaseAcrossClockStepBack: a step back lengthens the leases already set by the step: the
// key of a holder that died (no watchdog renews it, no release frees it) outlives its ttl by
// the step, and the next holder waits that much longer. A live holder is not hurt: its
// renewals and its release are relative.
func TestLeaseAcrossClockStepBack(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	s, clock := servers.StartRedisFakeClock(t)
	_, c := lossClient(t, s)
	_, other := lossClient(t, s)
	const ttl = time.Second
	dead := mustObtain(t, c, clockKey, ttl, nil) // its holder dies: never renewed, never released
	stepped := clock.Step(t, -3*time.Second)
	l := mustObtain(t, other, clockKey, ttl, &dlock.Options{Wait: 10 * time.Second})
	waited := time.Since(stepped)
	mustRelease(t, l)
	if waited < 3*time.Second {
		t.Errorf("a dead holder's 1s key, after a step of -3s, freed %v after the step, want the ttl and the step", waited)
	}
	if l.Fence() <= dead.Fence() {
		t.Errorf("fence after the step back %d <= the dead holder's %d", l.Fence(), dead.Fence())
	}
	t.Logf("step -3s: a dead holder's 1s lease held the key %v after the step", waited.Round(time.Millisecond))

	live := mustObtain(t, c, clockKey, ttl, nil)
	wctx := live.Watch(context.Background())
	clock.Step(t, -3*time.Second)
	keptFor(t, wctx, 1500*time.Millisecond, "across a step back")
	mustRelease(t, live)
	mustRelease(t, mustObtain(t, other, clockKey, ttl, nil)) // released: free at once, whatever the clock
}

// TestFairQueueAcrossClockSteps: a fair waiter keeps its place by asking again within the
// queue timeout (1 s), measured on the server's clock. A step forward past that drops every
// place at once, live waiters' too: the first to ask after the step goes first, so the order
// of that round is lost (no waiter is lost: each takes a new place at the end). A step back
// lets a waiter that died hold the head of the queue for the timeout and the step.
func TestFairQueueAcrossClockSteps(t *testing.T) {
	skipClusterSuite(t)
	skipRedlockSuite(t)
	t.Parallel()
	s, clock := servers.StartRedisFakeClock(t)
	rdb, c := lossClient(t, s)
	ctx := context.Background()
	holder, err := c.ObtainFair(ctx, clockKey, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	order := make(chan int, n)
	var wg sync.WaitGroup
	clients := []*dlock.Client{c, newClient(t, rdb, nil), newClient(t, rdb, nil)}
	for i := range n {
		wg.Go(func() {
			l, err := clients[i%3].ObtainFair(ctx, clockKey, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
			if err != nil {
				t.Error(err)
				order <- -1
				return
			}
			order <- i
			time.Sleep(5 * time.Millisecond)
			mustRelease(t, l)
		})
		queued(t, rdb, clockKey, int64(i+1))
	}
	clock.Step(t, 3*time.Second) // past every place's timeout
	time.Sleep(200 * time.Millisecond)
	mustRelease(t, holder)
	wg.Wait()
	close(order)
	var got []int
	inversions := 0
	for w := range order {
		for _, before := range got {
			if before > w {
				inversions++
			}
		}
		got = append(got, w)
	}
	t.Logf("step +3s with %d fair waiters queued: granted in the order %v (%d pairs out of their order)", n, got, inversions)
	if len(got) != n || slices.Contains(got, -1) {
		t.Fatalf("grants %v: every waiter must get the key", got)
	}

	// A waiter that died at the head of the queue, then a step back: the live waiter behind it
	// waits for the dead one's place to time out, 1 s plus the step.
	holder, err = c.ObtainFair(ctx, clockKey, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	ghost := newRedisAt(t, s.Addr, nil)
	gc := dlock.New(ghost, nil)
	ghostDone := make(chan error, 1)
	go func() {
		_, err := gc.ObtainFair(ctx, clockKey, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
		ghostDone <- err
	}()
	queued(t, rdb, clockKey, 1)
	_ = ghost.Close() // its process is gone: it neither asks again nor leaves the queue
	if err := <-ghostDone; err == nil {
		t.Fatal("the ghost obtained the lock")
	}
	_ = gc.Close()
	clock.Step(t, -3*time.Second)
	mustRelease(t, holder)
	start := time.Now()
	l, err := c.ObtainFair(ctx, clockKey, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	mustRelease(t, l)
	if waited < 3*time.Second {
		t.Errorf("behind a dead waiter, after a step of -3s, the live waiter got the key in %v, want the timeout and the step", waited)
	}
	t.Logf("step -3s: a dead waiter held the head of the queue %v (queue timeout 1s)", waited.Round(time.Millisecond))
}
