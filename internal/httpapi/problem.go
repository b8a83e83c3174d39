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
	// OrderID is the user's existing order, on 409 already_purchased.
	OrderID int64 `json:"order_id,omitempty"`
}

// problemTypeBase prefixes every problem type URI; the README documents each code.
const problemTypeBase = "https://github.com/seckill/seckill#error-"

// abortProblem writes a problem as application/problem+json and stops the handler chain.
func abortProblem(c *gin.Context, status int, code, detail string) {
	writeProblem(c, Problem{Status: status, Code: code, Detail: detail})
}

// writeProblem fills in p's type and title, writes it as application/problem+json and stops
// the handler chain.
func writeProblem(c *gin.Context, p Problem) {
	p.Type = problemTypeBase + p.Code
	p.Title = http.StatusText(p.Status)
	if p.Title == "" {
		p.Title = "Client Closed Request" // 499, nginx's name: the client is gone
	}
	c.Header("Content-Type", "application/problem+json")
	c.AbortWithStatusJSON(p.Status, p)
}
