package loadgen

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
)

// Outcome is what one purchase request came to, from its status and problem code.
type Outcome uint8

const (
	Bought           Outcome = iota // 201
	Accepted                        // 202: queued (queue strategy), its unit taken; the order is written later
	SoldOut                         // 409 sold_out
	AlreadyPurchased                // 409 already_purchased
	Busy                            // 503 busy: the lock was not obtained in time; nothing written
	Unavailable                     // 503 unavailable: PostgreSQL or Redis could not serve; nothing written
	OutcomeUnknown                  // 503 outcome_unknown: the COMMIT got no answer; the order may exist
	RateLimited                     // 429, whatever the body
	SaleNotStarted                  // 409 sale_not_started: before the product's starts_at; nothing written
	SaleEnded                       // 410 sale_ended: from the product's ends_at on; nothing written
	NotYourTurn                     // 409 not_your_turn: the buyer's place in the line is not called yet
	PlaceExpired                    // 410 place_expired: the buyer's call in the line has ended
	Other4xx                        // any other 4xx, including a 409 whose problem code we do not know
	ServerError                     // any other 5xx
	TransportError                  // no HTTP response: refused, reset, timed out
	Unexpected                      // 1xx, 2xx other than 201 and 202, 3xx
	NumOutcomes

	// noTarget is vegeta's "no targets to attack" result, which a Targeter that runs dry
	// produces after the last real request. It is not a request: it is excluded from every
	// count, latency and file.
	noTarget Outcome = 255
)

var outcomeNames = [NumOutcomes]string{
	Bought:           "bought",
	Accepted:         "accepted", // 202: the service's order.OutcomeAccepted, the metric's label too
	SoldOut:          api.CodeSoldOut,
	AlreadyPurchased: api.CodeAlreadyPurchased,
	Busy:             api.CodeBusy,
	Unavailable:      api.CodeUnavailable,
	OutcomeUnknown:   api.CodeOutcomeUnknown,
	RateLimited:      api.CodeRateLimited,
	SaleNotStarted:   api.CodeSaleNotStarted,
	SaleEnded:        api.CodeSaleEnded,
	NotYourTurn:      api.CodeNotYourTurn,
	PlaceExpired:     api.CodePlaceExpired,
	Other4xx:         "other_4xx",
	ServerError:      "5xx",
	TransportError:   "transport_error",
	Unexpected:       "unexpected",
}

// problemOutcomes are the outcomes read from a problem's code, when the status is the code's.
var problemOutcomes = map[string]Outcome{
	api.CodeSoldOut:          SoldOut,
	api.CodeAlreadyPurchased: AlreadyPurchased,
	api.CodeBusy:             Busy,
	api.CodeUnavailable:      Unavailable,
	api.CodeOutcomeUnknown:   OutcomeUnknown,
	api.CodeSaleNotStarted:   SaleNotStarted,
	api.CodeSaleEnded:        SaleEnded,
	api.CodeNotYourTurn:      NotYourTurn,
	api.CodePlaceExpired:     PlaceExpired,
}

func (o Outcome) String() string {
	if o < NumOutcomes {
		return outcomeNames[o]
	}
	return "no_target"
}

// isError reports whether o means something went wrong, as opposed to an answer a flash sale
// gives on purpose (bought, accepted, sold out, already purchased, busy, rate limited, the sale
// not started or ended, the line's not your turn or place expired). A backing service that is unavailable, and a purchase whose outcome
// is unknown, are errors.
func (o Outcome) isError() bool {
	switch o {
	case Unavailable, OutcomeUnknown, Other4xx, ServerError, TransportError, Unexpected:
		return true
	}
	return false
}

// admits reports whether o admitted the buyer: bought (201), or accepted (202), whose order
// the queue strategy writes after the answer. Once the queue has drained, every admitted
// buyer has an order.
func (o Outcome) admits() bool { return o == Bought || o == Accepted }

// isUnclear reports whether o leaves open whether the purchase created an order: no answer,
// an unexpected one, or the API saying it does not know.
func (o Outcome) isUnclear() bool {
	switch o {
	case OutcomeUnknown, ServerError, TransportError, Unexpected:
		return true
	}
	return false
}

// classify reads the outcome of one vegeta result.
func classify(r *vegeta.Result) Outcome {
	switch {
	case r.Code == 0 && r.Error == vegeta.ErrNoTargets.Error():
		return noTarget
	case r.Code == 0:
		return TransportError
	case r.Code == http.StatusCreated:
		return Bought
	case r.Code == http.StatusAccepted:
		return Accepted
	case r.Code == http.StatusTooManyRequests:
		return RateLimited
	case r.Code < 400:
		return Unexpected
	}
	if code := problemCode(r.Body); api.Status(code) == int(r.Code) {
		if o, ok := problemOutcomes[code]; ok {
			return o
		}
	}
	if r.Code < 500 {
		return Other4xx
	}
	return ServerError
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

// Counts holds how many requests came to each outcome.
type Counts [NumOutcomes]int64

// Total is the number of requests counted.
func (c Counts) Total() (n int64) {
	for _, v := range c {
		n += v
	}
	return n
}

// Errors is the number of requests whose outcome is an error (see outcome.isError).
func (c Counts) Errors() int64 { return c.sum(Outcome.isError) }

// Admitted returns the answers that admitted their buyer, repeats included.
func (c Counts) Admitted() int64 { return c.sum(Outcome.admits) }

// Unclear returns the requests that may have created an order.
func (c Counts) Unclear() int64 { return c.sum(Outcome.isUnclear) }

func (c Counts) sum(of func(Outcome) bool) (n int64) {
	for o, v := range c {
		if of(Outcome(o)) {
			n += v
		}
	}
	return n
}

// MarshalJSON writes the counts as an object keyed by outcome name, in outcome order.
func (c Counts) MarshalJSON() ([]byte, error) {
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
func (c *Counts) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for o, name := range outcomeNames {
		c[o] = m[name]
	}
	return nil
}

// liveCounts is counts updated by the attack loop and read by the progress line and the
// live page, with the time of the last admitting answer (the end of the selling window so
// far); it is safe for concurrent use.
type liveCounts struct {
	n         [NumOutcomes]atomic.Int64
	lastAdmit atomic.Int64 // UnixNano of the last admitting answer's arrival; 0: none yet
}

// add counts an answer of outcome o that arrived at at.
func (l *liveCounts) add(o Outcome, at time.Time) {
	if o < NumOutcomes {
		l.n[o].Add(1)
	}
	if o.admits() {
		for t := at.UnixNano(); ; {
			old := l.lastAdmit.Load()
			if old >= t || l.lastAdmit.CompareAndSwap(old, t) {
				break
			}
		}
	}
}

func (l *liveCounts) snapshot() (c Counts) {
	for o := range l.n {
		c[o] = l.n[o].Load()
	}
	return c
}

// lastAdmitted returns when the last admitting answer arrived, zero before the first.
func (l *liveCounts) lastAdmitted() time.Time {
	if t := l.lastAdmit.Load(); t > 0 {
		return time.Unix(0, t)
	}
	return time.Time{}
}
