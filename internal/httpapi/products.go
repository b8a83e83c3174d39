package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// errBadUser is the 400 for a user_id that is missing, null or not positive.
var errBadUser = detailed{"user_id must be a positive 64-bit integer"}

// handleCreateProduct: POST /api/v1/products (admin).
func handleCreateProduct(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		var req api.NewProduct
		if err := decodeJSON(c, &req); err != nil {
			writeError(c, d, err)
			return
		}
		if req.Stock == nil {
			writeError(c, d, detailed{"stock is required"})
			return
		}
		if req.Fair && d.NoFair != nil {
			writeError(c, d, detailed{"fair products need a single Redis or Redis Cluster for their locks; this API uses Redlock"})
			return
		}
		p, err := d.Products.Create(c.Request.Context(), inventory.NewProduct{
			Name: req.Name, Stock: *req.Stock, Strategy: inventory.Strategy(req.Strategy), ThinkMS: req.ThinkMS,
			LabLock: req.Lock, LeaseMS: req.LeaseMS, Fair: req.Fair, PayWithinMS: req.PayWithinMS,
			StartsAt: req.StartsAt, EndsAt: req.EndsAt, Line: lineSpec(req.Line),
		})
		if err != nil {
			writeError(c, d, err)
			return
		}
		if err := d.Orders.Prepare(c.Request.Context(), p); err != nil {
			d.Logger.WarnContext(c.Request.Context(), "preparing the sale failed; its first buyer prepares it", "product_id", p.ID, "err", err)
		}
		d.Logger.InfoContext(c.Request.Context(), "product created", "product_id", p.ID, "stock", p.Stock, "strategy", p.Strategy, "lock", p.LabLock)
		c.Header("Location", "/api/v1/products/"+strconv.FormatInt(p.ID, 10))
		c.JSON(http.StatusCreated, productOf(p))
	}
}

// handleGetProduct: GET /api/v1/products/:id.
func handleGetProduct(d Deps) gin.HandlerFunc { return handleRead(d, d.Products.Get, productOf) }

// handleAudit: GET /api/v1/products/:id/audit (admin).
func handleAudit(d Deps) gin.HandlerFunc { return handleRead(d, d.Orders.Audit, auditOf) }

// handleRead answers a GET of one product's record: read at the path's :id, rendered by view
// (200), or the error's problem.
func handleRead[T, V any](d Deps, read func(context.Context, int64) (T, error), view func(T) V) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := pathID(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		v, err := read(c.Request.Context(), id)
		if err != nil {
			writeError(c, d, err)
			return
		}
		c.JSON(http.StatusOK, view(v))
	}
}

// handlePurchase: POST /api/v1/products/:id/purchase.
func handlePurchase(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, user, err := productBuyer(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		if err := d.Limiter.Allow(c.Request.Context(), id, user, c.ClientIP()); err != nil {
			writeError(c, d, err)
			return
		}
		o, err := d.Orders.Purchase(c.Request.Context(), id, user)
		switch {
		case errors.Is(err, order.ErrAccepted):
			writeAccepted(c, id, user)
		case err != nil:
			writeError(c, d, err)
		default:
			c.JSON(http.StatusCreated, orderOf(o))
		}
	}
}

// writeAccepted answers 202 to a queued purchase not written yet, with the order lookup in
// Location.
func writeAccepted(c *gin.Context, id, user int64) {
	lookup := fmt.Sprintf("/api/v1/products/%d/orders/%d", id, user)
	c.Header("Location", lookup)
	c.JSON(http.StatusAccepted, api.Accepted{Status: "accepted", ProductID: id, UserID: user, Order: lookup})
}

// handleOrderOf: GET /api/v1/products/:id/orders/:user_id, the user's order as committed
// now (the live one, else the latest): how a client that got no answer, or 503
// outcome_unknown, finds out.
func handleOrderOf(d Deps) gin.HandlerFunc { return handleReservation(d, d.Orders.OrderOf) }

// handleReservation answers a call on the order at /api/v1/products/:id/orders/:user_id:
// the lookup, or POST .../pay and .../cancel (Service.Pay, Service.Cancel). With buyer
// identity on, another user's order answers 404 order_not_found, as a missing one does,
// without being read; off, anyone may call them for any user id (docs/api.md#buyer-identity).
// 200 with the order, or the error's problem.
func handleReservation(d Deps, call func(ctx context.Context, productID, userID int64) (order.Order, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, user, err := pathUser(c)
		if err != nil {
			writeError(c, d, err)
			return
		}
		if !ownOrder(c, user) {
			writeError(c, d, order.ErrOrderNotFound)
			return
		}
		o, err := call(c.Request.Context(), id, user)
		if err != nil {
			writeError(c, d, err)
			return
		}
		c.JSON(http.StatusOK, orderOf(o))
	}
}
