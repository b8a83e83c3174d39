package loadgen

import (
	"encoding/json"
	"math"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestBuyersDistinctWithoutRepeats(t *testing.T) {
	t.Parallel()
	b := newBuyers(100, 0, 1)
	const goroutines, each = 8, 500
	ids := make(chan int64, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				id, repeat := b.id()
				if repeat {
					t.Error("repeat with repeat share 0")
				}
				ids <- id
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		if id < 100 || id >= 100+goroutines*each {
			t.Fatalf("id %d outside [100, %d)", id, 100+goroutines*each)
		}
		seen[id] = true
	}
	if distinct, repeats := b.issued(); distinct != goroutines*each || repeats != 0 {
		t.Fatalf("issued = %d, %d; want %d, 0", distinct, repeats, goroutines*each)
	}
}

func TestBuyersRepeatShare(t *testing.T) {
	t.Parallel()
	for _, share := range []float64{0.1, 0.5, 0.9} {
		b := newBuyers(1, share, 42)
		const n = 20000
		seen := map[int64]bool{}
		var repeats int
		for range n {
			id, repeat := b.id()
			if repeat != seen[id] {
				t.Fatalf("share %v: id %d repeat=%v, but seen before=%v", share, id, repeat, seen[id])
			}
			if repeat {
				repeats++
			}
			seen[id] = true
		}
		if got := float64(repeats) / n; math.Abs(got-share) > 0.02 {
			t.Errorf("share %v: %.3f of requests repeated an id", share, got)
		}
		if distinct, r := b.issued(); distinct != int64(len(seen)) || r != int64(repeats) {
			t.Errorf("share %v: issued = %d, %d; want %d, %d", share, distinct, r, len(seen), repeats)
		}
	}
}

func TestBuyersSeedIsReproducible(t *testing.T) {
	t.Parallel()
	a, b := newBuyers(1, 0.3, 7), newBuyers(1, 0.3, 7)
	for i := range 1000 {
		x, _ := a.id()
		y, _ := b.id()
		if x != y {
			t.Fatalf("request %d: ids %d and %d from the same seed", i, x, y)
		}
	}
}

func TestTargeterRoundRobin(t *testing.T) {
	t.Parallel()
	urls := purchaseURLs([]string{"http://127.0.0.1:8081/", "http://127.0.0.1:8082"}, 42)
	if got, want := urls[0], "http://127.0.0.1:8081/api/v1/products/42/purchase"; got != want {
		t.Fatalf("url = %q, want %q", got, want)
	}
	tr := newTargeter(urls, newBuyers(5, 0, 1), nil)
	for i := range 4 {
		var tgt vegeta.Target
		if err := tr(&tgt); err != nil {
			t.Fatal(err)
		}
		if got, want := tgt.URL, urls[i%2]; got != want {
			t.Errorf("target %d: url %q, want %q", i, got, want)
		}
		var body struct {
			UserID int64 `json:"user_id"`
		}
		if err := json.Unmarshal(tgt.Body, &body); err != nil {
			t.Fatalf("body %q: %v", tgt.Body, err)
		}
		if got, want := body.UserID, int64(5+i); got != want {
			t.Errorf("target %d: user_id %d, want %d", i, got, want)
		}
		if tgt.Method != "POST" || tgt.Header.Get("Content-Type") != "application/json" {
			t.Errorf("target %d: %s with %v", i, tgt.Method, tgt.Header)
		}
	}
	if err := tr(nil); err != vegeta.ErrNilTarget {
		t.Errorf("tr(nil) = %v, want ErrNilTarget", err)
	}
}

func TestLimitPacer(t *testing.T) {
	t.Parallel()
	p := newPacer(0, 3)
	for hits := range uint64(3) {
		if wait, stop := p.Pace(0, hits); stop || wait != 0 {
			t.Fatalf("Pace(0, %d) = %s, %v; want 0, false", hits, wait, stop)
		}
	}
	if _, stop := p.Pace(0, 3); !stop {
		t.Fatal("Pace after the limit did not stop")
	}
	// With a rate, the pacer spaces hits out.
	if wait, stop := newPacer(10, 0).Pace(0, 1); stop || wait != 200*time.Millisecond {
		t.Fatalf("Pace at 10/s = %s, %v; want 200ms, false", wait, stop)
	}
}
