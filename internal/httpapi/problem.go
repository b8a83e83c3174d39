package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// abortProblem writes the contract's problem for code, with detail, and stops the handler
// chain.
func abortProblem(c *gin.Context, code, detail string) {
	writeProblem(c, api.NewProblem(code, detail))
}

// writeProblem writes p as application/problem+json with its status and stops the handler
// chain.
func writeProblem(c *gin.Context, p api.Problem) {
	c.Header("Content-Type", api.ContentTypeProblem)
	c.AbortWithStatusJSON(p.Status, p)
}
