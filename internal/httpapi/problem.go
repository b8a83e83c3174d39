package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/reqid"
)

// abortProblem writes the contract's problem for code, with detail, and stops the handler
// chain.
func abortProblem(c *gin.Context, code, detail string) {
	writeProblem(c, api.NewProblem(code, detail))
}

// writeProblem writes p as application/problem+json with its status, and the request's id
// (withRequestID) in its request_id, and stops the handler chain.
func writeProblem(c *gin.Context, p api.Problem) {
	p.RequestID = reqid.From(c.Request.Context())
	if _, ok := c.Get(problemKey); ok { // the access log is on
		c.Set(problemKey, p.Code)
	}
	c.Header("Content-Type", api.ContentTypeProblem)
	c.AbortWithStatusJSON(p.Status, p)
}
