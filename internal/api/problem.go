package api

import (
	"fmt"
	"net/http"
)

// ProblemTypeBase prefixes every problem's Type; the code follows it, and the README
// documents each code under that anchor.
const ProblemTypeBase = "https://github.com/seckill/seckill#error-"

// ContentTypeProblem is the media type of a problem body.
const ContentTypeProblem = "application/problem+json"

// Problem is an RFC 9457 problem details body: every answer of the API with a status of 400
// or more. Code is what clients branch on; Title and Detail are for people.
//
// A *Problem is an error: the client (internal/api/client) returns every non-2xx answer as
// one, so callers write
//
//	var p *api.Problem
//	if errors.As(err, &p) && p.Code == api.CodeSoldOut { ... }
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
	// OrderID is the user's existing order, on CodeAlreadyPurchased; the order paid or cancel
	// refused, on CodeOrderExpired, CodeOrderCancelled and CodeOrderPaid.
	OrderID int64 `json:"order_id,omitempty"`
	// ProductID names the product that decided a bundle purchase's answer, on CodeSoldOut,
	// CodeAlreadyPurchased and CodeProductNotFound to POST /api/v1/bundles/purchase.
	ProductID int64 `json:"product_id,omitempty"`
	// RequestID is the request's id, as in the answer's X-Request-ID header: the client's own
	// when the server accepted it, else one the server made. Every log line the server wrote
	// for the request carries it. The server always sets it.
	RequestID string `json:"request_id,omitempty"`
	// RetryAfter is the answer's Retry-After header as sent (whole seconds), on
	// CodeRateLimited, CodeBusy, CodeUnavailable and CodeOutcomeUnknown; empty when absent.
	// It is not part of the body: the client fills it in from the header.
	RetryAfter string `json:"-"`
}

// NewProblem returns the problem the API answers for code, one of the Code constants: its
// status, type and title follow from the code.
func NewProblem(code, detail string) Problem {
	status := Status(code)
	title := http.StatusText(status)
	if status == StatusClientClosedRequest {
		title = "Client Closed Request" // nginx's name: the client is gone
	}
	return Problem{Type: ProblemTypeBase + code, Title: title, Status: status, Code: code, Detail: detail}
}

// SoldOut returns the problem the API answers a purchase of a product with no stock left:
// 409 sold_out. The server sends this with the request's RequestID; the sold-out ceiling the
// load tests measure it against (internal/ceiling) sends exactly this.
func SoldOut() Problem { return NewProblem(CodeSoldOut, "this product is sold out") }

// Error describes the problem as "status code: detail", or with the status's title where
// there is no code (an answer that was not a problem).
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
