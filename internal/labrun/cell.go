package labrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/timeline"
)

// Cell is one lock in one scenario: what the sale did, and what was expected of it.
type Cell struct {
	Lock     string `json:"lock"`
	Scenario string `json:"scenario"`
	Expected string `json:"expected"`
	Verdict  string `json:"verdict"`
	// Oversold is how many orders the stock does not account for: orders + stock - initial.
	Oversold int `json:"oversold"`
	// StuckKey is the lock key left behind by a stalled sale, with its state.
	StuckKey     string  `json:"stuck_key,omitempty"`
	ProductID    int64   `json:"product_id"`
	InitialStock int     `json:"initial_stock"`
	Stock        int     `json:"stock"`
	Orders       int     `json:"orders"`
	Fault        string  `json:"fault,omitempty"` // what was done to which process
	OrdersPerSec float64 `json:"orders_per_sec"`
	// HandoffsPerSec is how many purchases a second held the lock: answers given while
	// holding it (orders, sold out, already purchased), over the sale.
	HandoffsPerSec float64        `json:"handoffs_per_sec"`
	Answers        map[string]int `json:"answers"` // outcome -> count, retries included
	// Untrue counts the buyers whose answers PostgreSQL contradicts: a 201 without an order,
	// or an order without a 201, an already_purchased, or an answer that may hide one (a
	// process that died mid-request, outcome_unknown). 0 in every cell, whatever the lock:
	// a broken lock oversells, but the service never lies about it.
	Untrue int `json:"untrue"`
	// Inversions are sold_out answers to requests sent more than 5 ms before the last request
	// that bought: buyers served out of the order they came in.
	Inversions int     `json:"inversions"`
	Series     []Point `json:"series"` // orders and stock over the sale
	Seconds    float64 `json:"seconds"`
	Error      string  `json:"error,omitempty"` // the cell could not run
	// History is the linearizability checker's verdict on the cell's lock history.
	History *HistoryCheck `json:"history,omitempty"`
	// Timeline is the cell's lock history drawn as lanes, one per API process: who held the
	// lock when, the faults, the reads and writes, the overlaps and the writes that oversold.
	Timeline *timeline.Timeline `json:"timeline,omitempty"`
}

// OK reports whether the cell came out as expected, its lock history's check included.
func (c Cell) OK() bool {
	return c.Error == "" && c.Untrue == 0 && c.Verdict == c.Expected && (c.History == nil || c.History.OK())
}

// Point is a sample of a sale: ms after it started, orders and stock in PostgreSQL.
type Point struct {
	MS     int64 `json:"ms"`
	Orders int   `json:"orders"`
	Stock  int   `json:"stock"`
}

// cellTimeout bounds how long buyers keep trying in one cell; stallAfter is how long a sale
// with stock left must have sold nothing, at the end, to count as stalled.
const (
	cellTimeout = 10 * time.Second
	stallAfter  = 3 * time.Second
	workers     = 24
)

// crowd is one cell's buyers: users 1..n, each trying until a final answer (an order, sold
// out, already purchased) or the cell's end, spread over the API processes.
type crowd struct {
	clients []*client.Client
	product int64
	start   time.Time

	mu      sync.Mutex
	answers map[string]int
	users   map[int64]heard // what each buyer was told, over its tries
	// lastBuySent is when the last request that bought was sent, soldOutSent when each
	// sold_out one was (since start): the inversions' inputs.
	lastBuySent time.Duration
	soldOutSent []time.Duration
	lastHeld    time.Time // the last answer given under the lock
	lastSale    time.Time
	held        int
	sold        atomic.Int64
}

// buy runs n buyers with workers goroutines until they are all answered or ctx ends.
func (c *crowd) buy(ctx context.Context, n int) {
	users := make(chan int64, n)
	for u := range n {
		users <- int64(u + 1)
	}
	close(users)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for u := range users {
				c.buyer(ctx, u)
			}
		})
	}
	wg.Wait()
}

// buyer tries until a final answer, moving to the next process after an error of
// transport (a killed process) and pausing 10 to 40 ms between tries.
func (c *crowd) buyer(ctx context.Context, user int64) {
	i := int(user) % len(c.clients)
	for ctx.Err() == nil {
		sent := time.Now()
		_, err := c.clients[i].Purchase(ctx, c.product, user)
		outcome, final := outcomeOf(err)
		c.record(user, outcome, final, sent)
		if final {
			return
		}
		if outcome == "error" {
			i = (i + 1) % len(c.clients)
		}
		select {
		case <-time.After(10*time.Millisecond + rand.N(30*time.Millisecond)):
		case <-ctx.Done():
		}
	}
}

// heard is what one buyer was told: bits of heardOrder, heardHas and heardMaybe.
type heard uint8

const (
	heardOrder heard = 1 << iota // 201
	heardHas                     // already_purchased: an earlier try's order
	heardMaybe                   // no answer or outcome_unknown: an order may exist
)

func (c *crowd) record(user int64, outcome string, final bool, sent time.Time) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers[outcome]++
	switch outcome {
	case "created":
		c.lastBuySent = max(c.lastBuySent, sent.Sub(c.start))
	case api.CodeSoldOut:
		c.soldOutSent = append(c.soldOutSent, sent.Sub(c.start))
	}
	switch outcome {
	case "created":
		c.users[user] |= heardOrder
	case api.CodeAlreadyPurchased:
		c.users[user] |= heardHas
	case "error", api.CodeOutcomeUnknown:
		c.users[user] |= heardMaybe
	}
	if final {
		c.held++
		c.lastHeld = now
	}
	if outcome == "created" {
		c.lastSale = now
		c.sold.Add(1)
	}
}

// outcomeOf names a purchase's answer and tells whether the buyer is done.
func outcomeOf(err error) (string, bool) {
	var p *api.Problem
	switch {
	case err == nil:
		return "created", true
	case errors.As(err, &p) && (p.Code == api.CodeSoldOut || p.Code == api.CodeAlreadyPurchased):
		return p.Code, true
	case errors.As(err, &p):
		return p.Code, false
	default:
		return "error", false
	}
}

// rates are orders/s and handoffs/s over the sale.
func (c *crowd) rates() (orders, handoffs float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	per := func(n int, last time.Time) float64 {
		if d := last.Sub(c.start).Seconds(); n > 0 && d > 0 {
			return float64(n) / d
		}
		return 0
	}
	return per(c.answers["created"], c.lastSale), per(c.held, c.lastHeld)
}

// InversionSlack is how much earlier than the last request that bought a sold_out request
// must have been sent to count as an inversion: less is within the noise of sending and
// scheduling. cmd/loadtest and the lab count inversions with Inverted.
const InversionSlack = 5 * time.Millisecond

// Inverted reports whether a sold_out request sent at soldOut was an inversion, the last
// request that bought having been sent at lastBought (both from one origin): a buyer turned
// away although someone who came later bought.
func Inverted(soldOut, lastBought time.Duration) bool { return soldOut+InversionSlack < lastBought }

// inversions counts the sold_out answers to requests sent more than InversionSlack before
// the last request that bought: buyers turned away although someone who came later bought.
func (c *crowd) inversions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, at := range c.soldOutSent {
		if Inverted(at, c.lastBuySent) {
			n++
		}
	}
	return n
}

// untrue counts the buyers whose answers the orders in PostgreSQL (buyers) contradict.
func (c *crowd) untrue(buyers map[int64]bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for u, h := range c.users {
		if h&heardOrder != 0 && !buyers[u] {
			n++
		}
	}
	for u := range buyers {
		if c.users[u]&(heardOrder|heardHas|heardMaybe) == 0 {
			n++
		}
	}
	return n
}

// judge sets the cell's verdict from the final audit and the samples.
func judge(c *Cell, lastSale, end time.Time) {
	c.Oversold = c.Orders + c.Stock - c.InitialStock
	switch {
	case c.Oversold > 0:
		c.Verdict = Oversold
	case c.Stock == 0:
		c.Verdict = Safe
	case end.Sub(lastSale) >= stallAfter:
		c.Verdict = Stalled
	default:
		c.Verdict = Unfinished
	}
}

// Summary is the cell as the matrix shows it: safe, oversold N, stalled, unfinished or error.
func (c Cell) Summary() string {
	switch {
	case c.Error != "":
		return "error"
	case c.Untrue > 0:
		return fmt.Sprintf("%s, UNTRUE %d", c.Verdict, c.Untrue)
	case c.Verdict == Oversold:
		return fmt.Sprintf("oversold %d", c.Oversold)
	}
	return c.Verdict
}

// String is Summary with the stuck key of a stall or the error.
func (c Cell) String() string {
	switch {
	case c.Error != "":
		return "error: " + c.Error
	case c.Verdict == Stalled:
		return "stalled (" + c.StuckKey + ")"
	}
	return c.Summary()
}
