package httpapi

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// handleBundlePurchase: POST /api/v1/bundles/purchase, one unit of each product, all or
// nothing. Each product's per-user rate limit counts the attempt, the address limit once.
func handleBundlePurchase(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		var req api.BundlePurchase
		if err := decodeJSON(c, &req); err != nil {
			writeError(c, d, err)
			return
		}
		user, err := buyer(c, req.UserID)
		if err != nil {
			writeError(c, d, err)
			return
		}
		switch {
		case len(req.ProductIDs) == 0 || len(req.ProductIDs) > order.MaxBundle:
			writeError(c, d, detailed{fmt.Sprintf("product_ids must name 1 to %d products", order.MaxBundle)})
			return
		}
		for _, id := range req.ProductIDs {
			if id <= 0 {
				writeError(c, d, detailed{"product_ids must be positive 64-bit integers"})
				return
			}
		}
		if err := d.Limiter.AllowBundle(c.Request.Context(), req.ProductIDs, user, c.ClientIP()); err != nil {
			writeError(c, d, err)
			return
		}
		orders, err := d.Orders.PurchaseBundle(c.Request.Context(), req.ProductIDs, user)
		if err != nil {
			writeError(c, d, err)
			return
		}
		b := api.Bundle{Orders: make([]api.Order, len(orders))}
		for i, o := range orders {
			b.Orders[i] = orderOf(o)
		}
		c.JSON(http.StatusCreated, b)
	}
}
