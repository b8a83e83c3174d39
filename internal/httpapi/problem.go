package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Problem is an RFC 9457 problem details body. Code is a stable, machine-readable identifier
// that clients switch on; Title and Detail are for people.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
}

// problemTypeBase prefixes every problem type URI; the README documents each code.
const problemTypeBase = "https://github.com/seckill/seckill#error-"

// abortProblem writes p as application/problem+json and stops the handler chain.
func abortProblem(c *gin.Context, status int, code, detail string) {
	p := Problem{
		Type:   problemTypeBase + code,
		Title:  http.StatusText(status),
		Status: status,
		Code:   code,
		Detail: detail,
	}
	c.Header("Content-Type", "application/problem+json")
	c.AbortWithStatusJSON(status, p)
}
