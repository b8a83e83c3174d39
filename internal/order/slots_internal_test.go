package order

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// TestSlotsControlledDelay: the wait for a product's connection slots absorbs a burst in
// arrival order, each purchase waiting for its own deadline; a purchase that arrives at a
// standing queue (the wait non-empty for standingAfter) is answered ErrBusy after
// standingWait; once the wait has emptied, the next one waits for its deadline again. The
// clock is the test's: what decides is how long the queue stood, not how fast this machine is.
func TestSlotsControlledDelay(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		now = time.Unix(0, 0)
	)
	var shed shedCount
	s := newSlots(1, &shed)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	ctx := context.Background()
	const id = 7

	holder, err := s.acquire(ctx, id, "pessimistic")
	if err != nil {
		t.Fatal(err)
	}
	// A burst: three purchases queue within standingAfter; each gets the slot in turn.
	order := make(chan int, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			release, err := s.acquire(ctx, id, "pessimistic")
			if err != nil {
				t.Errorf("purchase %d of the burst: %v", i, err)
				return
			}
			order <- i
			release()
		})
		waitFor(t, func() bool { return s.waiting(id) == i+1 })
		time.Sleep(20 * time.Millisecond) // counted, then parked on the channel: let it park
		advance(standingAfter / 4)
	}
	// The queue has now stood for 3/4 of standingAfter; a quarter more makes it standing.
	advance(standingAfter / 4)
	if _, err := s.acquire(ctx, id, "pessimistic"); !errors.Is(err, ErrBusy) || shed.n.Load() != 1 {
		t.Fatalf("a purchase arriving at a standing queue: %v, %d shed told; want ErrBusy, one", err, shed.n.Load())
	}
	holder()
	wg.Wait()
	close(order)
	var got []int
	for i := range order {
		got = append(got, i)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("the burst got the slot in the order %v, want 0 1 2", got)
	}
	// The wait emptied: the next purchase to queue waits for its deadline, not standingWait.
	holder, err = s.acquire(ctx, id, "pessimistic")
	if err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	got2 := make(chan error, 1)
	go func() {
		release, err := s.acquire(ctx, id, "pessimistic")
		if err == nil {
			release()
		}
		got2 <- err
	}()
	waitFor(t, func() bool { return s.waiting(id) == 1 })
	time.Sleep(4 * standingWait) // it would have been shed by now, were the queue standing
	holder()
	if err := <-got2; err != nil {
		t.Fatalf("a purchase queueing at an empty wait: %v, want the slot", err)
	}
	if n := len(s.m); n != 0 {
		t.Errorf("%d products' entries left once nobody holds or waits, want 0", n)
	}
}

// shedCount is an Observer that counts the purchases shed.
type shedCount struct {
	noObserver
	n atomic.Int64
}

func (c *shedCount) Shed(inventory.Strategy) { c.n.Add(1) }

// waiting is how many purchases of product id wait for a slot.
func (s *slots) waiting(id int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.m[id]; ps != nil {
		return ps.waiting
	}
	return 0
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
	}
}
