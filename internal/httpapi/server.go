// Package httpapi is the HTTP edge of seckill: gin routes, thin handlers, and the one place
// that maps domain errors to RFC 9457 problem responses. It owns no business rules.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/health"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/tracing"
)

// Deps is everything the HTTP layer needs.
type Deps struct {
	Logger *slog.Logger
	// Ready returns nil while this process can serve (GET /readyz).
	Ready func() error
	// Backends watches the shared backends; /readyz lists their last states. Nil: none.
	Backends   *health.Checker
	AccessLog  AccessLog // which requests get an access log line; zero: none
	Products   *inventory.Store
	Orders     *order.Service
	AdminToken string // empty: admin routes answer 403
	// Buyers, if set, makes the buyer routes require its bearer token. Nil: user_id decides.
	Buyers   BuyerVerifier
	Metrics  http.Handler    // GET /metrics; nil: not served
	Limiter  *Limiter        // purchase rate limits; nil: none
	Requests RequestObserver // per-route request metrics; nil: none
	// NoFair, if set, refuses fair products (400), saying why.
	NoFair error
	// Tracer, if recording, spans each request. Nil: none.
	Tracer trace.TracerProvider
}

// NewServer returns the API's HTTP handler with every route.
func NewServer(d Deps) http.Handler { return newServer(d, false) }

// NewPublicServer is NewServer without /metrics and the admin routes (ADMIN_ADDR).
func NewPublicServer(d Deps) http.Handler { return newServer(d, true) }

func newServer(d Deps, public bool) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Ready == nil {
		d.Ready = func() error { return nil }
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.ContextWithFallback = true
	_ = r.SetTrustedProxies(nil) // ClientIP is the TCP peer; nothing is trusted from headers
	r.HandleMethodNotAllowed = true
	// gin answers these redirects itself, before any middleware: HTML, no request id.
	r.RedirectTrailingSlash, r.RedirectFixedPath = false, false
	if t := tracing.Tracer(d.Tracer); t != nil {
		r.Use(traced(t))
	}
	r.Use(withRequestID())
	if d.AccessLog.Mode != AccessLogOff && d.AccessLog.Mode != "" {
		r.Use(accessLog(d.Logger, d.AccessLog))
	}
	if d.Requests != nil {
		r.Use(observe(d.Requests))
	}
	r.Use(recoverer(d.Logger))
	addRoutes(r, d, public)
	return r
}

// recoverer turns a panic into a 500 problem and one error log line, never a stack trace
// in the response.
func recoverer(log *slog.Logger) gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, rec any) {
		log.ErrorContext(c.Request.Context(), "panic in handler", "method", c.Request.Method, "path", c.FullPath(), "panic", rec)
		abortProblem(c, api.CodeInternal, "")
	})
}
