package httpapi

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/reqid"
	"github.com/seckill/seckill/internal/tracing"
)

// traced gives each request a server span named by its method and route template
// ("POST /api/v1/products/:id/purchase"; the method alone when no route matched, never the
// raw path), a child of the caller's span when the request carries a W3C traceparent header.
// The span's context is the request's, so every span the handlers start descends from it.
// NewServer installs it only when tracing is on.
func traced(t trace.Tracer) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := tracing.Propagator.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
		route := c.FullPath()
		name := c.Request.Method
		if route != "" {
			name += " " + route
		}
		ctx, span := t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", c.Request.Method),
				attribute.String("http.route", route), attribute.String("url.path", c.Request.URL.Path)))
		defer span.End()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		code := c.Writer.Status()
		span.SetAttributes(attribute.Int("http.response.status_code", code),
			attribute.String("seckill.request_id", c.Writer.Header().Get(reqid.Header)))
		if code >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, strconv.Itoa(code))
		}
	}
}
