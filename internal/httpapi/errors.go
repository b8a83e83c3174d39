package httpapi

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// errBadRequest marks errors of the request itself (JSON, ids); its text is shown.
var errBadRequest = errors.New("invalid request")

// errTooLarge marks a body over the size limit.
var errTooLarge = errors.New("request body too large")

// writeError is the one place that turns an error into an HTTP answer. Domain errors get
// their status and stable code; anything unexpected is a 500 whose details go to the log
// only, never to the client.
func writeError(c *gin.Context, d Deps, err error) {
	switch {
	case errors.Is(err, errUserMismatch):
		abortProblem(c, api.CodeUserMismatch, "user_id is not the user of the bearer token: leave it out, or send the same")
	case errors.Is(err, errTooLarge):
		abortProblem(c, api.CodeRequestTooLarge, err.Error())
	case errors.Is(err, errBadRequest), errors.Is(err, inventory.ErrInvalid):
		abortProblem(c, api.CodeInvalidRequest, detail(err))
	case errors.Is(err, order.ErrOutcomeUnknown):
		d.Logger.WarnContext(c.Request.Context(), "purchase outcome unknown", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		c.Header("Retry-After", "1")
		abortProblem(c, api.CodeOutcomeUnknown,
			"the purchase may have gone through: GET /api/v1/products/{id}/orders/{user_id} tells, and a retry never buys twice")
	case errors.Is(err, order.ErrCanceled), c.Request.Context().Err() != nil && isContextEnd(err):
		d.Logger.DebugContext(c.Request.Context(), "client went away", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		abortProblem(c, api.CodeClientClosedRequest, "the client closed the request")
	case errors.Is(err, inventory.ErrNotFound):
		p := api.NewProblem(api.CodeProductNotFound, "no product with this id")
		p.ProductID = bundleProduct(err)
		writeProblem(c, p)
	case errors.Is(err, order.ErrOrderNotFound):
		abortProblem(c, api.CodeOrderNotFound, "this user has no order of this product")
	case errors.Is(err, inventory.ErrSoldOut):
		p := api.SoldOut()
		p.ProductID = bundleProduct(err)
		writeProblem(c, p)
	case errors.Is(err, inventory.ErrNotStarted), errors.Is(err, inventory.ErrEnded):
		writeWindowProblem(c, err)
	case errors.Is(err, inventory.ErrPaused), errors.Is(err, order.ErrIdempotencyConflict):
		writeControlProblem(c, err)
	case errors.Is(err, inventory.ErrNotYourTurn), errors.Is(err, inventory.ErrPlaceExpired), errors.Is(err, inventory.ErrNoLine):
		writeLineProblem(c, err)
	case errors.Is(err, order.ErrAlreadyPurchased):
		p := api.NewProblem(api.CodeAlreadyPurchased, "this user already bought this product")
		var pe *order.PurchasedError
		if errors.As(err, &pe) {
			p.OrderID = pe.Order.ID
		}
		p.ProductID = bundleProduct(err)
		writeProblem(c, p)
	case errors.Is(err, order.ErrOrderExpired), errors.Is(err, order.ErrOrderCancelled), errors.Is(err, order.ErrOrderPaid):
		writeProblem(c, reservationProblem(err))
	case errors.Is(err, errRateLimited):
		c.Header("Retry-After", retryAfter(err))
		abortProblem(c, api.CodeRateLimited, "too many purchase attempts; retry after Retry-After seconds")
	case errors.Is(err, order.ErrBusy):
		c.Header("Retry-After", "1")
		abortProblem(c, api.CodeBusy, "too many buyers at once; retry shortly")
	case errors.Is(err, order.ErrUnavailable), order.IsUnavailable(err):
		d.Logger.WarnContext(c.Request.Context(), "dependency unavailable", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		c.Header("Retry-After", "1")
		abortProblem(c, api.CodeUnavailable, "a backing service is unavailable; retry shortly")
	default:
		d.Logger.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		abortProblem(c, api.CodeInternal, "")
	}
}

// reservationProblem is the 409 of a payment or cancel the order's status refuses, naming
// the order.
func reservationProblem(err error) api.Problem {
	var p api.Problem
	switch {
	case errors.Is(err, order.ErrOrderExpired):
		p = api.NewProblem(api.CodeOrderExpired, "the reservation was not paid in time: its unit went back on sale")
	case errors.Is(err, order.ErrOrderCancelled):
		p = api.NewProblem(api.CodeOrderCancelled, "the reservation was cancelled: its unit went back on sale")
	default:
		p = api.NewProblem(api.CodeOrderPaid, "the order is paid")
	}
	var se *order.StateError
	if errors.As(err, &se) {
		p.OrderID = se.Order.ID
	}
	return p
}

// bundleProduct is the product that decided a bundle purchase's err, or 0.
func bundleProduct(err error) int64 {
	var pe *order.ProductError
	if errors.As(err, &pe) {
		return pe.ProductID
	}
	return 0
}

// isContextEnd reports whether err stems from a context that ended.
func isContextEnd(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// detail is the part of a validation error meant for the client: the text after the
// sentinel's prefix.
func detail(err error) string {
	var d detailed
	if errors.As(err, &d) {
		return d.msg
	}
	return strings.TrimPrefix(err.Error(), inventory.ErrInvalid.Error()+": ")
}

// detailed is a bad-request error with a message for the client.
type detailed struct{ msg string }

func (d detailed) Error() string { return d.msg }
func (d detailed) Unwrap() error { return errBadRequest }
