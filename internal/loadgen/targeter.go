package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// buyers hands out the user ids of successive purchase requests: new ids counting up from
// first and, with probability repeatShare, an id handed out before (a user trying again).
// It is safe for concurrent use.
type buyers struct {
	mu          sync.Mutex
	rng         *rand.Rand
	first, next int64
	repeatShare float64
	repeats     int64
}

// newBuyers returns buyers whose first new id is first. The same seed gives the same
// sequence of ids when the calls come one at a time.
func newBuyers(first int64, repeatShare float64, seed uint64) *buyers {
	return &buyers{
		rng:         rand.New(rand.NewPCG(seed, seed^0x5eC6111)),
		first:       first,
		next:        first,
		repeatShare: repeatShare,
	}
}

// id returns the user id of the next request and whether it repeats an earlier one.
func (b *buyers) id() (id int64, repeat bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next > b.first && b.repeatShare > 0 && b.rng.Float64() < b.repeatShare {
		b.repeats++
		return b.first + b.rng.Int64N(b.next-b.first), true
	}
	id = b.next
	b.next++
	return id, false
}

// issued returns how many distinct ids and how many repeats have been handed out.
func (b *buyers) issued() (distinct, repeats int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next - b.first, b.repeats
}

// purchaseURLs returns the purchase URL of product id on each API base URL.
func purchaseURLs(bases []string, productID int64) []string {
	urls := make([]string, len(bases))
	for i, base := range bases {
		urls[i] = fmt.Sprintf("%s/api/v1/products/%d/purchase", strings.TrimRight(base, "/"), productID)
	}
	return urls
}

// newTargeter returns a vegeta Targeter of purchase requests that go round-robin to urls,
// each with the next user id from b and, when tokens is not nil, that buyer's bearer token.
// It never runs dry: the attack is bounded by its pacer and duration. It is safe for
// concurrent use, as vegeta requires.
func newTargeter(urls []string, b *buyers, tokens *Tokens) vegeta.Targeter {
	var n atomic.Uint64
	header := http.Header{"Content-Type": []string{"application/json"}} // read-only: Request copies it
	return func(t *vegeta.Target) error {
		if t == nil {
			return vegeta.ErrNilTarget
		}
		id, _ := b.id()
		t.Method = http.MethodPost
		t.URL = urls[(n.Add(1)-1)%uint64(len(urls))]
		body := make([]byte, 0, 32)
		body = append(body, `{"user_id":`...)
		body = strconv.AppendInt(body, id, 10)
		t.Body = append(body, '}')
		t.Header = header
		if tokens != nil {
			jwt, err := tokens.Token(context.Background(), id)
			if err != nil {
				return err
			}
			t.Header = http.Header{"Content-Type": header["Content-Type"], "Authorization": []string{"Bearer " + jwt}}
		}
		return nil
	}
}

// limitPacer is a pacer that stops after max hits (0: no limit). vegeta counts a hit when
// it hands a tick to a worker, so an attack paced by it sends exactly max requests and never
// asks the Targeter for more: there are no trailing "no targets" results.
type limitPacer struct {
	vegeta.Pacer
	max uint64
}

func (p limitPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.max > 0 && hits >= p.max {
		return 0, true
	}
	return p.Pacer.Pace(elapsed, hits)
}

// newPacer returns a constant pacer of rate requests per second, or, for rate 0, one that
// never waits (the fixed pool of workers then sets the pace: "N users at once"); either
// stops after max requests when max > 0.
func newPacer(rate int, max uint64) vegeta.Pacer {
	return limitPacer{Pacer: vegeta.ConstantPacer{Freq: rate, Per: time.Second}, max: max}
}
