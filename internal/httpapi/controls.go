package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// PausedRetryAfter is the Retry-After of a purchase refused sale_paused: a merchant's pause
// lasts minutes, not milliseconds, and the refusal costs no round trip.
const PausedRetryAfter = 5 * time.Second

// handleControl: POST /api/v1/products/:id/pause, /resume and /end (admin), no body: 200 with
// the product as the control left it.
func handleControl(d Deps, control func(ctx context.Context, id int64) (inventory.Product, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := pathID(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		p, err := control(c.Request.Context(), id)
		if err != nil {
			writeError(c, d, err)
			return
		}
		c.JSON(http.StatusOK, productOf(p))
	}
}

// handleRestock: POST /api/v1/products/:id/restock (admin), body api.NewRestock: 200 with
// the restock its key committed first (Idempotent-Replayed: true on a retry).
func handleRestock(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := pathID(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		var req api.NewRestock
		if err := decodeJSON(c, &req); err != nil {
			writeError(c, d, err)
			return
		}
		if h := c.GetHeader("Idempotency-Key"); h != "" {
			if req.Key != "" && req.Key != h {
				writeError(c, d, detailed{"key and the Idempotency-Key header differ: send one, or the same"})
				return
			}
			req.Key = h
		}
		if req.Key == "" {
			writeError(c, d, detailed{"a restock needs a key (or an Idempotency-Key header): its retries add nothing"})
			return
		}
		r, err := d.Orders.Restock(c.Request.Context(), id, req.Key, req.Units)
		if err != nil {
			writeError(c, d, err)
			return
		}
		if r.Replayed {
			c.Header("Idempotent-Replayed", "true")
		}
		c.JSON(http.StatusOK, api.Restock{ProductID: r.ProductID, Key: r.Key, Units: r.Units, CreatedAt: r.CreatedAt})
	}
}

// writeControlProblem answers 409 sale_paused (with Retry-After) or idempotency_conflict.
func writeControlProblem(c *gin.Context, err error) {
	if errors.Is(err, order.ErrIdempotencyConflict) {
		abortProblem(c, api.CodeIdempotencyConflict, "this key was used by a restock of other units: nothing was added")
		return
	}
	p := api.NewProblem(api.CodeSalePaused, "the merchant paused the sale of this product: retry after Retry-After")
	p.ProductID = bundleProduct(err)
	c.Header("Retry-After", strconv.Itoa(int(PausedRetryAfter.Seconds())))
	writeProblem(c, p)
}
