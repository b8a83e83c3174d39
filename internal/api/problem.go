package api

import (
	"fmt"
	"net/http"
	"time"
)

// ProblemTypeBase prefixes every problem's Type, followed by its code.
const ProblemTypeBase = "https://github.com/seckill/seckill#error-"

// ContentTypeProblem is the media type of a problem body.
const ContentTypeProblem = "application/problem+json"

// Problem is the RFC 9457 body of every answer of 400 or more; branch on Code with errors.As.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
	// OrderID is the order a 409 is about.
	OrderID int64 `json:"order_id,omitempty"`
	// ProductID is the product that failed a bundle purchase.
	ProductID int64 `json:"product_id,omitempty"`
	// StartsAt is the sale's start, on sale_not_started; EndsAt its end, on sale_ended.
	StartsAt *time.Time `json:"starts_at,omitempty"`
	EndsAt   *time.Time `json:"ends_at,omitempty"`
	// Position is the buyer's 1-based place in the line, on not_your_turn once drawn.
	Position int64 `json:"position,omitempty"`
	// RequestID is the answer's X-Request-ID, which the server's log lines carry.
	RequestID string `json:"request_id,omitempty"`
	// RetryAfter is the Retry-After header in seconds, if any; the client fills it in.
	RetryAfter string `json:"-"`
}

// NewProblem returns the problem for code, one of the Code constants.
func NewProblem(code, detail string) Problem {
	status := Status(code)
	title := http.StatusText(status)
	if status == StatusClientClosedRequest {
		title = "Client Closed Request" // nginx's name: the client is gone
	}
	return Problem{Type: ProblemTypeBase + code, Title: title, Status: status, Code: code, Detail: detail}
}

// SoldOut returns the 409 sold_out problem.
func SoldOut() Problem { return NewProblem(CodeSoldOut, "this product is sold out") }

// Error returns "status code: detail".
func (p *Problem) Error() string {
	what := p.Code
	if what == "" {
		what = p.Title
	}
	if what == "" {
		what = http.StatusText(p.Status)
	}
	if p.Detail == "" {
		return fmt.Sprintf("%d %s", p.Status, what)
	}
	return fmt.Sprintf("%d %s: %s", p.Status, what, p.Detail)
}
