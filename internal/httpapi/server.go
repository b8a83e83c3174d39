// Package httpapi is the HTTP edge of seckill: gin routes, thin handlers, and the one place
// that maps domain errors to RFC 9457 problem responses. It owns no business rules.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// Deps is everything the HTTP layer needs.
type Deps struct {
	Logger     *slog.Logger
	Checks     map[string]Check // readiness checks by dependency name
	Products   *inventory.Store
	Orders     *order.Service
	AdminToken string       // empty: admin routes answer 403
	Metrics    http.Handler // GET /metrics; nil: not served
	Limiter    *Limiter     // purchase rate limits; nil: none
	// NoFair, when set, is why this deployment cannot sell fair products (its locks are
	// Redlock: dlock.ErrFairRedlock): creating one is refused, 400, with a
	// sentence for the API's users that says so.
	NoFair error
}

// NewServer returns the HTTP handler of the API: gin in release mode, no trusted proxies.
func NewServer(d Deps) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.ContextWithFallback = true
	_ = r.SetTrustedProxies(nil) // ClientIP is the TCP peer; nothing is trusted from headers
	r.HandleMethodNotAllowed = true
	r.Use(recoverer(d.Logger))
	addRoutes(r, d)
	return r
}

// recoverer turns a panic into a 500 problem and one error log line, never a stack trace
// in the response.
func recoverer(log *slog.Logger) gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, rec any) {
		log.Error("panic in handler", "method", c.Request.Method, "path", c.FullPath(), "panic", rec)
		abortProblem(c, api.CodeInternal, "")
	})
}
