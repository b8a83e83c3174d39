package httpapi

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
)

// writeWindowProblem answers a purchase outside its product's sale window: 409
// sale_not_started with Retry-After and starts_at, or 410 sale_ended with ends_at.
func writeWindowProblem(c *gin.Context, err error) {
	var we *inventory.WindowError
	if !errors.As(err, &we) {
		we = &inventory.WindowError{Err: err}
	}
	var p api.Problem
	if errors.Is(err, inventory.ErrNotStarted) {
		p = api.NewProblem(api.CodeSaleNotStarted, "the sale of this product has not started: retry at starts_at")
		c.Header("Retry-After", strconv.FormatInt(retrySeconds(we), 10))
		if !we.At.IsZero() {
			p.StartsAt = &we.At
		}
	} else {
		p = api.NewProblem(api.CodeSaleEnded, "the sale of this product has ended")
		if !we.At.IsZero() {
			p.EndsAt = &we.At
		}
	}
	p.ProductID = bundleProduct(err)
	writeProblem(c, p)
}

// retrySeconds is the whole seconds until the sale starts, rounded up, at least 1.
func retrySeconds(we *inventory.WindowError) int64 {
	return max(1, int64(math.Ceil(time.Until(we.At).Seconds())))
}
