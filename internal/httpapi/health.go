package httpapi

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// Check reports whether one dependency answers. It must honour ctx.
type Check func(ctx context.Context) error

// handleHealthz answers 200 while the process is alive and serving.
func handleHealthz() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.JSON(http.StatusOK, api.Health{Status: api.StateOK})
	}
}

// handleReadyz runs every check with a short timeout and answers 200 only when all pass,
// 503 otherwise. The body names each dependency and its state, never the error text, which
// goes to the log (it can hold addresses).
func handleReadyz(checks map[string]Check, logf func(name string, err error)) gin.HandlerFunc {
	names := make([]string, 0, len(checks))
	for name := range checks {
		names = append(names, name)
	}
	sort.Strings(names)
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		status, body := http.StatusOK, api.Readiness{Status: api.StateOK, Checks: make(map[string]string, len(names))}
		for _, name := range names {
			if err := checks[name](ctx); err != nil {
				logf(name, err)
				status, body.Status, body.Checks[name] = http.StatusServiceUnavailable, api.StateUnavailable, api.StateUnavailable
				continue
			}
			body.Checks[name] = api.StateOK
		}
		c.JSON(status, body)
	}
}
