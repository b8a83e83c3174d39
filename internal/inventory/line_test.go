package inventory_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// lineProduct is a product with a line of rate places a second, each called windowMS,
// starting at start (products are values here: the line reads nothing but Redis).
func lineProduct(id int64, start time.Time, rate, windowMS int) inventory.Product {
	return inventory.Product{ID: id, Strategy: inventory.StrategyRedis, StartsAt: &start, LineRate: rate, LineWindowMS: windowMS}
}

// newLine returns a line on a Redis key prefix of the test's own, its client and keys.
func newLine(t *testing.T) (*inventory.Line, *redis.Client, inventory.Keys) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	return inventory.NewLine(rdb, keys), rdb, keys
}

// redisNow is Redis's clock, which the line runs on.
func redisNow(t *testing.T, rdb *redis.Client) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// head is the places of a line called at now: burst + floor(rate * (now - start)), in
// integers (the script's formula, computed apart from it).
func head(p inventory.Product, now time.Time) int64 {
	if now.Before(*p.StartsAt) {
		return 0
	}
	start := p.StartsAt.Add(time.Millisecond - 1).Truncate(time.Millisecond) // the script's start: whole ms, rounded up
	return int64(p.LineBurst()) + int64(p.LineRate)*(now.UnixMilli()-start.UnixMilli())/1000
}

// TestLineCallsInTurn: 30 buyers join before the start, 25 of them poll from the start on,
// concurrently, from two replicas (Line values on their own connections); 5 never come back.
// Nobody is called before the start or ahead of the head (rank < burst + rate * elapsed), every
// buyer who polls is called by its rank's time whatever the no-shows ahead, and the no-shows'
// places expire once their window passes.
func TestLineCallsInTurn(t *testing.T) {
	l, rdb, keys := newLine(t)
	other := inventory.NewLine(redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(t)}), keys)
	ctx := context.Background()
	p := lineProduct(1, redisNow(t, rdb).Add(400*time.Millisecond), 10, 3_000) // 10 at the start, then 10 a second
	const buyers, noShows = 30, 5
	for u := int64(1); u <= buyers; u++ {
		pl, err := l.Join(ctx, p, u)
		if err != nil {
			t.Fatal(err)
		}
		if pl.State != inventory.Waiting || pl.Drawn() {
			t.Fatalf("before the start: place %+v, want waiting, not drawn", pl)
		}
	}
	if err := l.Admit(ctx, p, 1); !errors.Is(err, inventory.ErrNotYourTurn) {
		t.Fatalf("Admit before the start = %v, want ErrNotYourTurn", err)
	}
	type call struct {
		user int64
		pl   inventory.Place
	}
	calls := make(chan call, buyers)
	var wg sync.WaitGroup
	for u := int64(noShows + 1); u <= buyers; u++ {
		wg.Go(func() {
			replica := l
			if u%2 == 0 {
				replica = other
			}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				pl, err := replica.Join(ctx, p, u)
				if err != nil {
					t.Error(err)
					return
				}
				if pl.State == inventory.Called {
					calls <- call{u, pl}
					return
				}
				if pl.State != inventory.Waiting {
					t.Errorf("user %d: place %+v while polling, want waiting or called", u, pl)
					return
				}
			}
			t.Errorf("user %d never called", u)
		})
	}
	wg.Wait()
	close(calls)
	n := 0
	for c := range calls {
		n++
		rank := rdb.ZRank(ctx, keys.Line(p.ID), strconv.FormatInt(c.user, 10)).Val()
		due := p.StartsAt.Add(time.Duration(max(0, rank+1-int64(p.LineBurst()))) * time.Second / time.Duration(p.LineRate))
		switch {
		case c.pl.Rank != rank:
			t.Errorf("user %d: called at rank %d, its rank is %d", c.user, c.pl.Rank, rank)
		case c.pl.Now.Before(*p.StartsAt) || rank >= head(p, c.pl.Now):
			t.Errorf("user %d: called out of turn: rank %d at %s, head %d", c.user, rank, c.pl.Now.Sub(*p.StartsAt), head(p, c.pl.Now))
		case c.pl.Now.After(due.Add(300 * time.Millisecond)):
			t.Errorf("user %d: rank %d called %s after the start, due at %s", c.user, rank, c.pl.Now.Sub(*p.StartsAt), due.Sub(*p.StartsAt))
		}
	}
	if n != buyers-noShows {
		t.Fatalf("%d called, want %d", n, buyers-noShows)
	}
	// The no-shows: expired once their window passed, for good.
	time.Sleep(time.Until(p.StartsAt.Add(3*time.Second + 3*time.Second + 100*time.Millisecond)))
	for u := int64(1); u <= noShows; u++ {
		pl, err := other.Peek(ctx, p, u)
		if err != nil || pl.State != inventory.Expired {
			t.Errorf("no-show %d: %+v, %v; want expired", u, pl, err)
		}
		var le *inventory.LineError
		if err := l.Admit(ctx, p, u); !errors.Is(err, inventory.ErrPlaceExpired) || !errors.As(err, &le) {
			t.Errorf("no-show %d: Admit = %v, want ErrPlaceExpired", u, err)
		}
	}
}

// TestLineLateJoinersBehind: after the start a new buyer goes behind every place drawn before
// it, in order of arrival; in a line shorter than the head it is called at once, for its
// whole window from its arrival. A buyer not in line is not placed by Peek.
func TestLineLateJoinersBehind(t *testing.T) {
	l, rdb, _ := newLine(t)
	ctx := context.Background()
	p := lineProduct(1, redisNow(t, rdb).Add(200*time.Millisecond), 100, 1_000)
	for u := int64(1); u <= 5; u++ {
		if _, err := l.Join(ctx, p, u); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(p.StartsAt.Add(1200 * time.Millisecond))) // the early places' windows passed
	if pl, err := l.Peek(ctx, p, 6); err != nil || pl.State != inventory.NotInLine {
		t.Fatalf("Peek of a buyer not in line = %+v, %v; want not_in_line", pl, err)
	}
	for u := int64(6); u <= 8; u++ {
		pl, err := l.Join(ctx, p, u)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := pl.Rank, u-1; got != want {
			t.Errorf("late user %d: rank %d, want %d", u, got, want)
		}
		if pl.State != inventory.Called || pl.Until.Sub(pl.Now) < 900*time.Millisecond {
			t.Errorf("late user %d: %+v, want called for its window from now", u, pl)
		}
	}
	if err := l.Admit(ctx, p, 8); err != nil {
		t.Errorf("Admit of a late buyer called = %v", err)
	}
	if _, err := l.Join(ctx, inventory.Product{ID: 2}, 1); !errors.Is(err, inventory.ErrNoLine) {
		t.Errorf("Join of a product without a line = %v, want ErrNoLine", err)
	}
}

// TestLineOnePlacePerBuyer: 100 joins of one buyer at once, half through each of two
// replicas, make one place, whose draw never changes; both replicas see the same place.
func TestLineOnePlacePerBuyer(t *testing.T) {
	l, rdb, keys := newLine(t)
	other := inventory.NewLine(redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(t)}), keys)
	ctx := context.Background()
	p := lineProduct(1, redisNow(t, rdb).Add(300*time.Millisecond), 100, 30_000)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			replica := l
			if i%2 == 0 {
				replica = other
			}
			if _, err := replica.Join(ctx, p, 7); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	first := rdb.ZScore(ctx, keys.Line(p.ID), "7").Val()
	if _, err := l.Join(ctx, p, 7); err != nil {
		t.Fatal(err)
	}
	if n, s := rdb.ZCard(ctx, keys.Line(p.ID)).Val(), rdb.ZScore(ctx, keys.Line(p.ID), "7").Val(); n != 1 || s != first {
		t.Fatalf("after 101 joins: %d places, score %v then %v; want 1 place, one draw", n, first, s)
	}
	time.Sleep(time.Until(p.StartsAt.Add(5 * time.Millisecond)))
	a, errA := l.Peek(ctx, p, 7)
	b, errB := other.Peek(ctx, p, 7)
	if errA != nil || errB != nil || a.Rank != b.Rank || a.CalledAt != b.CalledAt || a.State != inventory.Called {
		t.Fatalf("replicas disagree: %+v (%v) and %+v (%v)", a, errA, b, errB)
	}
}
