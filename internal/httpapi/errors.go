package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// errBadRequest marks errors of the request itself (JSON, ids); its text is shown.
var errBadRequest = errors.New("invalid request")

// errTooLarge marks a body over the size limit.
var errTooLarge = errors.New("request body too large")

// statusClientClosed is the status logged for a request whose client went away before its
// answer (nginx's 499); nobody reads the answer.
const statusClientClosed = 499

// writeError is the one place that turns an error into an HTTP answer. Domain errors get
// their status and stable code; anything unexpected is a 500 whose details go to the log
// only, never to the client.
func writeError(c *gin.Context, d Deps, err error) {
	switch {
	case errors.Is(err, errTooLarge):
		abortProblem(c, http.StatusRequestEntityTooLarge, "request_too_large", err.Error())
	case errors.Is(err, errBadRequest), errors.Is(err, inventory.ErrInvalid):
		abortProblem(c, http.StatusBadRequest, "invalid_request", detail(err))
	case errors.Is(err, order.ErrOutcomeUnknown):
		d.Logger.Warn("purchase outcome unknown", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		c.Header("Retry-After", "1")
		abortProblem(c, http.StatusServiceUnavailable, "outcome_unknown",
			"the purchase may have gone through: GET /api/v1/products/{id}/orders/{user_id} tells, and a retry never buys twice")
	case errors.Is(err, order.ErrCanceled), c.Request.Context().Err() != nil && isContextEnd(err):
		d.Logger.Debug("client went away", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		abortProblem(c, statusClientClosed, "client_closed_request", "the client closed the request")
	case errors.Is(err, inventory.ErrNotFound):
		abortProblem(c, http.StatusNotFound, "product_not_found", "no product with this id")
	case errors.Is(err, order.ErrOrderNotFound):
		abortProblem(c, http.StatusNotFound, "order_not_found", "this user has no order of this product")
	case errors.Is(err, inventory.ErrSoldOut):
		abortProblem(c, http.StatusConflict, "sold_out", "this product is sold out")
	case errors.Is(err, order.ErrAlreadyPurchased):
		p := Problem{Status: http.StatusConflict, Code: "already_purchased", Detail: "this user already bought this product"}
		var pe *order.PurchasedError
		if errors.As(err, &pe) {
			p.OrderID = pe.Order.ID
		}
		writeProblem(c, p)
	case errors.Is(err, errRateLimited):
		c.Header("Retry-After", retryAfter(err))
		abortProblem(c, http.StatusTooManyRequests, "rate_limited", "too many purchase attempts; retry after Retry-After seconds")
	case errors.Is(err, order.ErrBusy):
		c.Header("Retry-After", "1")
		abortProblem(c, http.StatusServiceUnavailable, "busy", "too many buyers at once; retry shortly")
	case errors.Is(err, order.ErrUnavailable), order.IsUnavailable(err):
		d.Logger.Warn("dependency unavailable", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		c.Header("Retry-After", "1")
		abortProblem(c, http.StatusServiceUnavailable, "unavailable", "a backing service is unavailable; retry shortly")
	default:
		d.Logger.Error("request failed", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		abortProblem(c, http.StatusInternalServerError, "internal", "")
	}
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
