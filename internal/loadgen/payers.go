package loadgen

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
)

// What a winner of an abandonment sale does with its reservation.
const (
	choicePay    = "pay"
	choiceCancel = "cancel"
	choiceWalk   = "walk_away"
)

// payAttempts bounds the requests of one payment or cancel: an answer that changed nothing
// or may have (503 busy, unavailable, outcome_unknown, 429, no answer) is asked again, as
// both routes are idempotent, at most this many times in all.
const payAttempts = 3

// writeWait bounds how long the payment or cancel of a queued winner (answered 202) asks
// again while the answer is 404 order_not_found: its order is written after the 202, within
// milliseconds while the queue keeps up. Those answers are not among the payAttempts.
const (
	writeWait = 10 * time.Second
	writePoll = 50 * time.Millisecond
)

// payers are the winners of an abandonment sale after their purchase: each reservation
// (answered 201) is paid, cancelled or walked away from, as Abandon says, after a delay
// uniform in [0, PayDelay], through clients in turn. At most maxPaying requests are in flight.
// ctx bounds the requests; the lifecycle gives one an interrupt does not end, so that a
// payment drawn is made (bounded by PayDelay and payAttempts requests of -timeout each) and
// the audit counts it. It is safe for concurrent use.
type payers struct {
	ctx       context.Context
	cfg       Abandon
	productID int64
	clients   []*client.Client
	sem       chan struct{}
	wg        sync.WaitGroup

	mu        sync.Mutex
	rng       *rand.Rand
	next      int
	reserved  int64            // answers 201 whose order is pending
	choices   map[string]int64 // choicePay, choiceCancel, choiceWalk
	answers   map[string]int64 // "pay paid", "pay order_expired", "cancel cancelled", ...: every request's answer
	cancelled int64            // cancels answered 200
	unclear   int64            // payments or cancels whose outcome no answer told
	// paidUsers are the users a payment was answered 200 for. Both routes act on the user's
	// live order: a late payment of a reservation that expired pays the user's next one, if
	// the user bought again, and its own payment is then answered 200 once more. So the
	// payments answered 200 may exceed the orders paid; the users paid may not.
	paidUsers map[int64]bool
}

const maxPaying = 256

func newPayers(ctx context.Context, cfg Abandon, productID int64, clients []*client.Client, seed uint64) *payers {
	return &payers{ctx: ctx, cfg: cfg, productID: productID, clients: clients, sem: make(chan struct{}, maxPaying),
		rng: rand.New(rand.NewPCG(seed, seed^0xAba9d0)), choices: map[string]int64{}, answers: map[string]int64{},
		paidUsers: map[int64]bool{}}
}

// reservedBy is told of each reservation, by user (queued: answered 202, its order written
// later): it draws what the winner does, and when, and schedules it. It never blocks.
func (p *payers) reservedBy(user int64, queued bool) {
	p.mu.Lock()
	p.reserved++
	u := p.rng.Float64()
	delay := time.Duration(p.rng.Int64N(int64(p.cfg.PayDelay) + 1))
	choice := choiceWalk
	switch {
	case u < p.cfg.PayRatio:
		choice = choicePay
	case u < p.cfg.PayRatio+p.cfg.CancelRatio:
		choice = choiceCancel
	}
	p.choices[choice]++
	c := p.clients[p.next%len(p.clients)]
	p.next++
	p.mu.Unlock()
	if choice == choiceWalk {
		return
	}
	p.wg.Add(1)
	time.AfterFunc(delay, func() {
		defer p.wg.Done()
		p.sem <- struct{}{}
		defer func() { <-p.sem }()
		p.act(c, choice, user, queued)
	})
}

// act pays or cancels user's reservation, asking again (at most payAttempts in all) while
// the answer leaves the outcome open; for a queued winner, also while its order is not
// written yet (404 order_not_found, for writeWait at most).
func (p *payers) act(c *client.Client, choice string, user int64, queued bool) {
	unwritten := time.Now().Add(writeWait)
	for attempt := 1; ; {
		var err error
		if choice == choicePay {
			_, err = c.Pay(p.ctx, p.productID, user)
		} else {
			_, err = c.Cancel(p.ctx, p.productID, user)
		}
		answer := answerName(choice, err)
		if queued && answer == api.CodeOrderNotFound && time.Now().Before(unwritten) && p.ctx.Err() == nil {
			time.Sleep(writePoll) // not written yet: not one of the attempts
			continue
		}
		open := answerOpen(err)
		final := !open || attempt == payAttempts || p.ctx.Err() != nil
		p.note(choice, user, answer, final && open)
		if final {
			return
		}
		time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		attempt++
	}
}

// note counts one answer to user's choice; final marks the last of an outcome left open.
func (p *payers) note(choice string, user int64, answer string, unclear bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers[choice+" "+answer]++
	switch {
	case answer == api.StatusPaid:
		p.paidUsers[user] = true
	case answer == api.StatusCancelled:
		p.cancelled++
	case unclear:
		p.unclear++
	}
}

// answerName names the answer to a payment or cancel: the order's status for 200, the
// problem's code otherwise, "transport_error" without an answer.
func answerName(choice string, err error) string {
	var prob *api.Problem
	switch {
	case err == nil && choice == choicePay:
		return api.StatusPaid
	case err == nil:
		return api.StatusCancelled
	case errors.As(err, &prob) && prob.Code != "":
		return prob.Code
	case errors.As(err, &prob):
		return "http_" + strconv.Itoa(prob.Status)
	}
	return "transport_error"
}

// answerOpen reports whether err leaves a payment's or cancel's outcome open, worth asking
// again: no answer, 429, or a 503.
func answerOpen(err error) bool {
	var prob *api.Problem
	if err == nil {
		return false
	}
	if !errors.As(err, &prob) {
		return true
	}
	return prob.Status == 429 || prob.Status == 503
}

// wait waits for every scheduled payment and cancel to end: at most PayDelay and the
// requests' timeouts after the last reservation.
func (p *payers) wait() { p.wg.Wait() }

// PayerCounts is what the payers of an abandonment sale did so far.
type PayerCounts struct {
	Reserved int64            `json:"reserved"`
	Choices  map[string]int64 `json:"choices"`
	Answers  map[string]int64 `json:"answers"`
	// PaidUsers are the users a payment was answered 200 for (see payers.paidUsers).
	PaidUsers int64 `json:"paid_users"`
	Cancelled int64 `json:"cancelled"`
	Unclear   int64 `json:"unclear"`
}

func (p *payers) counts() PayerCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := PayerCounts{Reserved: p.reserved, Choices: map[string]int64{}, Answers: map[string]int64{},
		PaidUsers: int64(len(p.paidUsers)), Cancelled: p.cancelled, Unclear: p.unclear}
	for k, v := range p.choices {
		c.Choices[k] = v
	}
	for k, v := range p.answers {
		c.Answers[k] = v
	}
	return c
}
