package inventory_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// Fairness: over trials, an early hammerer's rank among honest buyers who join later, each
// once, must be uniform. The chi-square statistic of its rank over honest+1 cells, with
// trials draws, is compared with the 0.999 quantile of chi-square with 20 degrees of
// freedom: a fair line fails 1 run in 1,000; the biased controls below fail it always.
const (
	fairHonest  = 20
	fairTrials  = 200
	fairHammers = 1000
	chi2Crit20  = 45.315 // chi-square, 20 degrees of freedom, upper 0.001 tail
)

// joiner joins user to the line of product id; the hammerer is user 0.
type joiner func(ctx context.Context, id, user int64) error

// hammererRanks runs fairTrials lines (products 1..fairTrials, 4 at a time): in each, the
// hammerer joins first, then 50 times more before each of fairHonest honest buyers joins once,
// in turn. It returns how often the hammerer got each rank in the sorted set key(id).
func hammererRanks(t *testing.T, rdb *redis.Client, key func(id int64) string, join joiner) []int {
	t.Helper()
	ctx := context.Background()
	counts := make([]int, fairHonest+1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	trials := make(chan int64)
	for range 4 {
		wg.Go(func() {
			for trial := range trials {
				rank, err := hammerTrial(ctx, rdb, key(trial), trial, join)
				mu.Lock()
				if err != nil {
					t.Error(err)
				} else {
					counts[rank]++
				}
				mu.Unlock()
			}
		})
	}
	for trial := int64(1); trial <= fairTrials; trial++ {
		trials <- trial
	}
	close(trials)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return counts
}

// hammerTrial is one of hammererRanks' lines: the hammerer's rank in it.
func hammerTrial(ctx context.Context, rdb *redis.Client, key string, id int64, join joiner) (int64, error) {
	if err := join(ctx, id, 0); err != nil {
		return 0, err
	}
	for h := int64(1); h <= fairHonest; h++ {
		for range fairHammers / fairHonest {
			if err := join(ctx, id, 0); err != nil {
				return 0, err
			}
		}
		if err := join(ctx, id, h); err != nil {
			return 0, err
		}
	}
	if n := rdb.ZCard(ctx, key).Val(); n != fairHonest+1 {
		return 0, fmt.Errorf("line %d: %d places, want %d (one per buyer)", id, n, fairHonest+1)
	}
	return rdb.ZRank(ctx, key, "0").Result()
}

// chiSquare is the statistic of counts against the uniform distribution.
func chiSquare(counts []int) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	want := float64(n) / float64(len(counts))
	var x float64
	for _, c := range counts {
		x += (float64(c) - want) * (float64(c) - want) / want
	}
	return x
}

// TestLineFairToHammerer is the done-when of docs/api.md#the-line-before-the-start: an early
// hammerer's rank is uniform. Its controls, a line scored by arrival and one that draws again
// on every join keeping the best draw, must be rejected by the same check.
func TestLineFairToHammerer(t *testing.T) {
	testenv.SkipShort(t, "200 lines of 21 buyers and 1,000 hammer joins each")
	l, rdb, keys := newLine(t)
	start := redisNow(t, rdb).Add(time.Hour)
	line := func(ctx context.Context, id, user int64) error {
		_, err := l.Join(ctx, lineProduct(id, start, 100, 30_000), user)
		return err
	}
	counts := hammererRanks(t, rdb, keys.Line, line)
	x := chiSquare(counts)
	t.Logf("hammerer's ranks over %d trials: %v, chi-square %.1f (reject above %.1f)", fairTrials, counts, x, chi2Crit20)
	if x > chi2Crit20 {
		t.Fatalf("hammerer's rank is not uniform: chi-square %.1f > %.1f, ranks %v", x, chi2Crit20, counts)
	}

	controls := map[string]joiner{
		// Arrival order: what a FIFO line does; the first to come (the hammerer) is first.
		"arrival": func(ctx context.Context, id, user int64) error {
			k := keys.Line(id) + ":arrival"
			n := rdb.Incr(ctx, k+":n").Val()
			return rdb.ZAddNX(ctx, k, redis.Z{Score: float64(n), Member: user}).Err()
		},
		// A fresh draw on every join, keeping the lowest: hammering buys draws.
		"redraw": func(ctx context.Context, id, user int64) error {
			s, _ := strconv.ParseFloat(inventory.DrawScore(), 64)
			return rdb.ZAddLT(ctx, keys.Line(id)+":redraw", redis.Z{Score: s, Member: user}).Err()
		},
	}
	for name, join := range controls {
		key := func(id int64) string { return keys.Line(id) + ":" + name }
		counts := hammererRanks(t, rdb, key, join)
		if x := chiSquare(counts); x <= chi2Crit20 {
			t.Errorf("control %s passed the check: chi-square %.1f, ranks %v", name, x, counts)
		} else {
			t.Logf("control %s rejected: chi-square %.0f, ranks %v", name, x, counts)
		}
	}
}
