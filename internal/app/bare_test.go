package app_test

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// bareGin is the least a gin handler can do for a purchase request: decode it and answer
// 409 sold_out. It measures the HTTP framework's share of a sold-out answer.
func bareGin() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.POST("/api/v1/products/:id/purchase", func(c *gin.Context) {
		var req struct {
			UserID int64 `json:"user_id"`
		}
		if err := json.NewDecoder(c.Request.Body).Decode(&req); err != nil {
			c.AbortWithStatus(http.StatusBadRequest)
			return
		}
		c.Header("Content-Type", api.ContentTypeProblem)
		c.AbortWithStatusJSON(http.StatusConflict, gin.H{"code": api.CodeSoldOut, "status": 409})
	})
	return r
}
