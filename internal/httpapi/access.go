package httpapi

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// The access log's modes (AccessLog.Mode).
const (
	AccessLogAll    = "all"    // every request, the sale's bulk refusals sampled (AccessLog.Sample)
	AccessLogErrors = "errors" // the answers of status 499 and 500 or more only
	AccessLogOff    = "off"
)

// AccessLog says which requests get an access line. Its zero value is off.
type AccessLog struct {
	Mode string // AccessLogAll, AccessLogErrors or AccessLogOff; empty: off
	// Sample is the share, 0 to 1, of 409 and 429 answers logged under AccessLogAll.
	Sample float64
}

// ParseAccessLog reads ACCESS_LOG (all, errors or off) and ACCESS_LOG_SAMPLE (0 to 1).
func ParseAccessLog(mode, sample string) (AccessLog, error) {
	a := AccessLog{Mode: mode}
	switch mode {
	case AccessLogAll, AccessLogErrors, AccessLogOff:
	default:
		return a, fmt.Errorf("ACCESS_LOG %q: want all, errors or off", mode)
	}
	s, err := strconv.ParseFloat(sample, 64)
	if err != nil || s < 0 || s > 1 {
		return a, fmt.Errorf("ACCESS_LOG_SAMPLE %q: want a share from 0 to 1, such as 0.01", sample)
	}
	a.Sample = s
	return a, nil
}

// logs reports whether an answer of status gets a line.
func (a AccessLog) logs(status int) bool {
	switch {
	case status >= http.StatusInternalServerError || status == 499:
		return a.Mode == AccessLogAll || a.Mode == AccessLogErrors
	case a.Mode != AccessLogAll:
		return false
	case status == http.StatusConflict || status == http.StatusTooManyRequests:
		return a.Sample >= 1 || a.Sample > 0 && rand.Float64() < a.Sample
	}
	return true
}

// problemKey is the gin key under which writeProblem leaves the problem's code for the access
// log, once accessLog has set it: without the access log, nothing is stored.
const problemKey = "seckill.problem_code"

// accessLog writes one info line per request that a says to log (but the probes answered 200:
// /healthz, /readyz), once the handlers are done:
// method, route template ("unmatched" when none matched, never the raw path), status, the
// problem's code, duration, the client's address (the TCP peer; X-Forwarded-For as sent, when
// there is one, untrusted) and, through the request's context, its request_id.
func accessLog(log *slog.Logger, a AccessLog) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Set(problemKey, "")
		c.Next()
		status := c.Writer.Status()
		route := c.FullPath()
		if !a.logs(status) || status == http.StatusOK && (route == "/healthz" || route == "/readyz") {
			return // probes answered 200 come every second from each load balancer and kubelet
		}
		if route == "" {
			route = "unmatched"
		}
		code := c.GetString(problemKey)
		attrs := []slog.Attr{
			slog.String("method", c.Request.Method), slog.String("route", route), slog.Int("status", status),
			slog.String("code", code), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("remote", c.ClientIP()),
		}
		if xff := c.Request.Header.Get("X-Forwarded-For"); xff != "" {
			attrs = append(attrs, slog.String("forwarded_for", xff))
		}
		log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request", attrs...)
	}
}
