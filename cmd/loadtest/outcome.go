package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// outcome is what one purchase request came to. vegeta alone calls every status >= 400 a
// failure; a flash sale answers most buyers 409 sold_out on purpose, so we read the status
// code and the problem code of the RFC 9457 body instead.
type outcome uint8

const (
	bought           outcome = iota // 201
	soldOut                         // 409 code sold_out
	alreadyPurchased                // 409 code already_purchased
	busy                            // 503 code busy (the lock was not obtained in time)
	rateLimited                     // 429, whatever the body
	other4xx                        // any other 4xx, including a 409 or 503-less problem we do not know
	serverError                     // 5xx other than 503 busy
	transportError                  // no HTTP response: refused, reset, timed out
	unexpected                      // 1xx, 2xx other than 201, 3xx
	numOutcomes

	// noTarget is vegeta's "no targets to attack" result, which a Targeter that runs dry
	// produces after the last real request. It is not a request: it is excluded from every
	// count, latency and file.
	noTarget outcome = 255
)

var outcomeNames = [numOutcomes]string{
	bought:           "bought",
	soldOut:          "sold_out",
	alreadyPurchased: "already_purchased",
	busy:             "busy",
	rateLimited:      "rate_limited",
	other4xx:         "other_4xx",
	serverError:      "5xx",
	transportError:   "transport_error",
	unexpected:       "unexpected",
}

func (o outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "no_target"
}

// isError reports whether o means something went wrong, as opposed to a well-formed answer
// of the sale (bought, sold out, already purchased, busy, rate limited).
func (o outcome) isError() bool {
	switch o {
	case other4xx, serverError, transportError, unexpected:
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
	case r.Code == http.StatusConflict:
		switch problemCode(r.Body) {
		case "sold_out":
			return soldOut
		case "already_purchased":
			return alreadyPurchased
		}
		return other4xx
	case r.Code == http.StatusTooManyRequests:
		return rateLimited
	case r.Code == http.StatusServiceUnavailable && problemCode(r.Body) == "busy":
		return busy
	case r.Code >= 400 && r.Code < 500:
		return other4xx
	case r.Code >= 500:
		return serverError
	}
	return unexpected
}

// problemCode returns the "code" member of a problem+json body, or "" when there is none.
func problemCode(body []byte) string {
	if !bytes.Contains(body, []byte(`"code"`)) {
		return ""
	}
	var p struct {
		Code string `json:"code"`
	}
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
func (c counts) errors() (n int64) {
	for o, v := range c {
		if outcome(o).isError() {
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
