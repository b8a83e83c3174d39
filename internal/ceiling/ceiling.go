// Package ceiling is the least a gin handler can do for a purchase of seckill's API: decode
// the request and answer the contract's sold-out problem (api.SoldOut), with no service behind
// it. It is the ceiling the service's sold-out rejection is measured against: cmd/loadtest's
// baseline serves it in processes of their own and attacks it like the API, and internal/app's
// BenchmarkBareGin calls it in memory beside the real handler.
//
// It exists to be measured, not served: nothing on the service's request paths imports it
// (a test of this package checks cmd/api, internal/app and internal/httpapi).
package ceiling

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// maxBody bounds the request body read, as the API bounds it.
const maxBody = 4 << 10

// Handler returns a gin engine (in release mode, safe for concurrent use) whose one route,
// POST /api/v1/products/:id/purchase, answers a decodable user_id 409 with the API's sold-out
// problem and anything else 400 with no body; other requests get gin's 404.
func Handler() http.Handler {
	body, err := json.Marshal(api.SoldOut())
	if err != nil {
		panic("ceiling: encode the sold-out problem: " + err.Error()) // a Problem always encodes
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.POST("/api/v1/products/:id/purchase", func(c *gin.Context) {
		var req api.Purchase
		if err := json.NewDecoder(io.LimitReader(c.Request.Body, maxBody)).Decode(&req); err != nil {
			c.AbortWithStatus(http.StatusBadRequest)
			return
		}
		c.Data(http.StatusConflict, api.ContentTypeProblem, body)
	})
	return r
}
