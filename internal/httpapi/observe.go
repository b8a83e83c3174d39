package httpapi

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/reqid"
)

// RequestObserver records each answered request. internal/metrics implements it.
type RequestObserver interface {
	// Request records one request; route is gin's template, empty when none matched.
	Request(route, method string, code int, took time.Duration)
}

// withRequestID gives each request its id: the client's X-Request-ID when reqid.Valid
// accepts it, else a new one. The id goes in the request's context (every log line logged
// with it, and the problem body, carry it) and back in the response's X-Request-ID.
func withRequestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.Request.Header.Get(reqid.Header)
		if !reqid.Valid(id) {
			id = reqid.New()
		}
		c.Writer.Header()[reqid.Header] = []string{id}
		c.Request = c.Request.WithContext(reqid.With(c.Request.Context(), id))
		c.Next()
	}
}

// observe reports each request to o once the handlers are done, under its route template.
func observe(o RequestObserver) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		o.Request(c.FullPath(), c.Request.Method, c.Writer.Status(), time.Since(start))
	}
}
