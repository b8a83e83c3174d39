package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// outcome is what one purchase request came to. vegeta alone calls every status >= 400 a
// failure; a flash sale answers most buyers 409 sold_out on purpose, so we read the status
// code and the problem code of the RFC 9457 body (the contract, internal/api) instead.
type outcome uint8

const (
	bought           outcome = iota // 201
	accepted                        // 202: queued (queue strategy), its unit taken; the order is written later
	soldOut                         // 409 sold_out
	alreadyPurchased                // 409 already_purchased
	busy                            // 503 busy: the lock was not obtained in time; nothing written
	unavailable                     // 503 unavailable: PostgreSQL or Redis could not serve; nothing written
	outcomeUnknown                  // 503 outcome_unknown: the COMMIT got no answer; the order may exist
	rateLimited                     // 429, whatever the body
	other4xx                        // any other 4xx, including a 409 whose problem code we do not know
	serverError                     // any other 5xx
	transportError                  // no HTTP response: refused, reset, timed out
	unexpected                      // 1xx, 2xx other than 201 and 202, 3xx
	numOutcomes

	// noTarget is vegeta's "no targets to attack" result, which a Targeter that runs dry
	// produces after the last real request. It is not a request: it is excluded from every
	// count, latency and file.
	noTarget outcome = 255
)

var outcomeNames = [numOutcomes]string{
	bought:           "bought",
	accepted:         order.OutcomeAccepted,
	soldOut:          api.CodeSoldOut,
	alreadyPurchased: api.CodeAlreadyPurchased,
	busy:             api.CodeBusy,
	unavailable:      api.CodeUnavailable,
	outcomeUnknown:   api.CodeOutcomeUnknown,
	rateLimited:      api.CodeRateLimited,
	other4xx:         "other_4xx",
	serverError:      "5xx",
	transportError:   "transport_error",
	unexpected:       "unexpected",
}

// problemOutcomes are the outcomes read from a problem's code, when the status is the code's.
var problemOutcomes = map[string]outcome{
	api.CodeSoldOut:          soldOut,
	api.CodeAlreadyPurchased: alreadyPurchased,
	api.CodeBusy:             busy,
	api.CodeUnavailable:      unavailable,
	api.CodeOutcomeUnknown:   outcomeUnknown,
}

func (o outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "no_target"
}

// isError reports whether o means something went wrong, as opposed to an answer a flash sale
// gives on purpose (bought, accepted, sold out, already purchased, busy, rate limited). A backing
// service that is unavailable, and a purchase whose outcome is unknown, are errors.
func (o outcome) isError() bool {
	switch o {
	case unavailable, outcomeUnknown, other4xx, serverError, transportError, unexpected:
		return true
	}
	return false
}

// admits reports whether o admitted the buyer: bought (201), or accepted (202), whose order
// the queue strategy writes after the answer. Once the queue has drained, every admitted
// buyer has an order.
func (o outcome) admits() bool { return o == bought || o == accepted }

// isUnclear reports whether o leaves open whether the purchase created an order: no answer,
// an unexpected one, or the API saying it does not know.
func (o outcome) isUnclear() bool {
	switch o {
	case outcomeUnknown, serverError, transportError, unexpected:
		return true
	}
	return false
}

// classify reads the outcome of one vegeta result.
func classify(r *vegeta.Result) outcome {
	switch {
	case r.Code == 0 && r.Error == vegeta.ErrNoTargets.Error():
		return noTarget
	case r.Code == 0:
		return transportError
	case r.Code == http.StatusCreated:
		return bought
	case r.Code == http.StatusAccepted:
		return accepted
	case r.Code == http.StatusTooManyRequests:
		return rateLimited
	case r.Code < 400:
		return unexpected
	}
	if code := problemCode(r.Body); api.Status(code) == int(r.Code) {
		if o, ok := problemOutcomes[code]; ok {
			return o
		}
	}
	if r.Code < 500 {
		return other4xx
	}
	return serverError
}

// problemCode returns the code of a problem body, or "" when the body is not one.
func problemCode(body []byte) string {
	if !bytes.Contains(body, []byte(`"code"`)) {
		return ""
	}
	var p api.Problem
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Code
}

// counts holds how many requests came to each outcome.
type counts [numOutcomes]int64

func (c counts) total() (n int64) {
	for _, v := range c {
		n += v
	}
	return n
}

// errors is the number of requests whose outcome is an error (see outcome.isError).
func (c counts) errors() int64 { return c.sum(outcome.isError) }

// admitted is the number of answers that admitted their buyer (see outcome.admits). A queued
// buyer who asks again is answered 202 again: runStats.buyers counts each buyer once.
func (c counts) admitted() int64 { return c.sum(outcome.admits) }

// unclear is the number of requests that may or may not have created an order (see
// outcome.isUnclear).
func (c counts) unclear() int64 { return c.sum(outcome.isUnclear) }

func (c counts) sum(of func(outcome) bool) (n int64) {
	for o, v := range c {
		if of(outcome(o)) {
			n += v
		}
	}
	return n
}

// MarshalJSON writes the counts as an object keyed by outcome name, in outcome order.
func (c counts) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for o, v := range c {
		if o > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + outcomeNames[o] + `":`)
		b.WriteString(strconv.FormatInt(v, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *counts) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for o, name := range outcomeNames {
		c[o] = m[name]
	}
	return nil
}

// liveCounts is counts updated by the attack loop and read by the progress line; it is safe
// for concurrent use.
type liveCounts [numOutcomes]atomic.Int64

func (l *liveCounts) add(o outcome) {
	if o < numOutcomes {
		l[o].Add(1)
	}
}

func (l *liveCounts) snapshot() (c counts) {
	for o := range l {
		c[o] = l[o].Load()
	}
	return c
}
