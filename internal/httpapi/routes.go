package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// addRoutes is the single list of every route the API serves. With public, it leaves out
// what the load balancer must not reach: /metrics and the admin routes (NewPublicServer).
func addRoutes(r *gin.Engine, d Deps, public bool) {
	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(d.Ready, d.Backends))
	if d.Metrics != nil && !public {
		r.GET("/metrics", gin.WrapH(d.Metrics))
	}

	v1 := r.Group("/api/v1")
	admin := requireAdmin(d.AdminToken, d.Logger)
	if !public {
		v1.POST("/products", admin, handleCreateProduct(d))
		v1.GET("/products/:id/audit", admin, handleAudit(d))
		v1.POST("/products/:id/pause", admin, handleControl(d, d.Orders.Pause))
		v1.POST("/products/:id/resume", admin, handleControl(d, d.Orders.Resume))
		v1.POST("/products/:id/end", admin, handleControl(d, d.Orders.End))
		v1.POST("/products/:id/restock", admin, handleRestock(d))
	}
	v1.GET("/products/:id", handleGetProduct(d))
	buyer := requireBuyer(d.Buyers, d) // pass-through unless buyer identity is on
	v1.POST("/products/:id/purchase", buyer, handlePurchase(d))
	v1.POST("/products/:id/line", buyer, handleJoinLine(d))
	v1.GET("/products/:id/line/:user_id", buyer, handleLinePlace(d))
	v1.POST("/bundles/purchase", buyer, handleBundlePurchase(d))
	v1.GET("/products/:id/orders/:user_id", buyer, handleOrderOf(d))
	v1.POST("/products/:id/orders/:user_id/pay", buyer, handleReservation(d, d.Orders.Pay))
	v1.POST("/products/:id/orders/:user_id/cancel", buyer, handleReservation(d, d.Orders.Cancel))
	r.GET(api.OpenAPIPath, handleOpenAPI())

	r.NoRoute(func(c *gin.Context) {
		abortProblem(c, api.CodeNotFound, "no such route")
	})
	r.NoMethod(func(c *gin.Context) {
		abortProblem(c, api.CodeMethodNotAllowed, "method not allowed on this route")
	})
}
