package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/health"
)

// servingCheck names the process's own state in a readiness body.
const servingCheck = "serving"

// handleHealthz answers 200 while the process is alive and serving.
func handleHealthz() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.JSON(http.StatusOK, api.Health{Status: api.StateOK})
	}
}

// handleReadyz answers whether this process can serve: 200 unless ready returns an error
// (draining), 503 then. It does no I/O: the backends every replica shares are listed as
// backends' last round saw them (nil: none), and decide the status only with ?full=1 (or
// full=true), a report for people that no probe should use. The body never holds an
// error's text.
func handleReadyz(ready func() error, backends *health.Checker) gin.HandlerFunc {
	return func(c *gin.Context) {
		body := api.Readiness{Status: api.StateOK, Checks: map[string]string{servingCheck: api.StateOK}}
		if ready() != nil {
			body.Status, body.Checks[servingCheck] = api.StateUnavailable, api.StateUnavailable
		}
		full := c.Query("full")
		full1 := full == "1" || full == "true"
		if backends != nil {
			for _, r := range backends.Last() {
				state := api.StateOK
				if !r.Up {
					state = api.StateUnavailable
					if full1 {
						body.Status = api.StateUnavailable
					}
				}
				body.Checks[r.Backend] = state
			}
		}
		status := http.StatusOK
		if body.Status != api.StateOK {
			status = http.StatusServiceUnavailable
		}
		c.JSON(status, body)
	}
}
