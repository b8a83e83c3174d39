package httpapi

import (
	"context"
	"net/http"
	"sort"
	"sync"
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

// handleReadyz runs every check at once, each with the same short timeout, and answers 200
// only when all pass, 503 otherwise. At once, so that a check that hangs until its timeout
// (etcd without quorum, a Redlock node) does not leave the others no time and get them
// reported down too. The body names each dependency and its state, never the error text,
// which goes to the log (it can hold addresses).
func handleReadyz(checks map[string]Check, logf func(ctx context.Context, name string, err error)) gin.HandlerFunc {
	names := make([]string, 0, len(checks))
	for name := range checks {
		names = append(names, name)
	}
	sort.Strings(names)
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() { errs[i] = checks[name](ctx) })
		}
		wg.Wait()
		status, body := http.StatusOK, api.Readiness{Status: api.StateOK, Checks: make(map[string]string, len(names))}
		for i, name := range names {
			if errs[i] != nil {
				logf(c.Request.Context(), name, errs[i])
				status, body.Status, body.Checks[name] = http.StatusServiceUnavailable, api.StateUnavailable, api.StateUnavailable
				continue
			}
			body.Checks[name] = api.StateOK
		}
		c.JSON(status, body)
	}
}
