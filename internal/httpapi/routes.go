package httpapi

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// addRoutes is the single list of every route the API serves.
func addRoutes(r *gin.Engine, d Deps) {
	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(d.Checks, func(ctx context.Context, name string, err error) {
		d.Logger.WarnContext(ctx, "readiness check failed", "dependency", name, "err", err)
	}))
	if d.Metrics != nil {
		r.GET("/metrics", gin.WrapH(d.Metrics))
	}

	v1 := r.Group("/api/v1")
	admin := requireAdmin(d.AdminToken)
	v1.POST("/products", admin, handleCreateProduct(d))
	v1.GET("/products/:id", handleGetProduct(d))
	v1.POST("/products/:id/purchase", handlePurchase(d))
	v1.POST("/bundles/purchase", handleBundlePurchase(d))
	v1.GET("/products/:id/orders/:user_id", handleOrderOf(d))
	v1.POST("/products/:id/orders/:user_id/pay", handleReservation(d, d.Orders.Pay))
	v1.POST("/products/:id/orders/:user_id/cancel", handleReservation(d, d.Orders.Cancel))
	v1.GET("/products/:id/audit", admin, handleAudit(d))
	r.GET(api.OpenAPIPath, handleOpenAPI())

	r.NoRoute(func(c *gin.Context) {
		abortProblem(c, api.CodeNotFound, "no such route")
	})
	r.NoMethod(func(c *gin.Context) {
		abortProblem(c, api.CodeMethodNotAllowed, "method not allowed on this route")
	})
}
