package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/metrics"
)

// BenchmarkMiddleware: what the request id and the per-route metrics add to a request that
// does nothing else (a sold-out answer's bytes): "none" is gin with the handler alone, "id"
// adds withRequestID, "id+metrics" adds observe with the real collectors.
func BenchmarkMiddleware(b *testing.B) {
	body := []byte(`{"code":"sold_out"}`)
	m := metrics.New(nil, nil, buildinfo.Info{})
	for _, tt := range []struct {
		name string
		mw   []gin.HandlerFunc
	}{
		{"none", nil},
		{"id", []gin.HandlerFunc{httpapi.WithRequestID()}},
		{"id+metrics", []gin.HandlerFunc{httpapi.WithRequestID(), httpapi.Observe(m)}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			gin.SetMode(gin.ReleaseMode)
			r := gin.New()
			r.Use(tt.mw...)
			r.POST("/api/v1/products/:id/purchase", func(c *gin.Context) { c.Data(http.StatusConflict, "application/problem+json", body) })
			req := httptest.NewRequest(http.MethodPost, "/api/v1/products/7/purchase", nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				r.ServeHTTP(w, req)
			}
		})
	}
}
