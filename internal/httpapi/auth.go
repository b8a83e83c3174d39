package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// requireAdmin lets a request through only with "Authorization: Bearer <token>". With no
// token configured, admin routes answer 403 and say why. The comparison is constant-time
// (over SHA-256 digests, so not even the token's length leaks). A refused request logs a
// warning (route, client, what was wrong with the header), never the token sent.
func requireAdmin(token string, log *slog.Logger) gin.HandlerFunc {
	want := sha256.Sum256([]byte(token))
	return func(c *gin.Context) {
		if token == "" {
			abortProblem(c, api.CodeAdminDisabled,
				"admin routes are disabled: the server has no ADMIN_TOKEN")
			return
		}
		header := c.GetHeader("Authorization")
		got, ok := strings.CutPrefix(header, "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			reason := "wrong token"
			switch {
			case header == "":
				reason = "no Authorization header"
			case !ok:
				reason = "not a Bearer token"
			}
			log.WarnContext(c.Request.Context(), "admin auth failed", "method", c.Request.Method, "route", c.FullPath(),
				"remote", c.ClientIP(), "reason", reason)
			c.Header("WWW-Authenticate", `Bearer realm="seckill admin"`)
			abortProblem(c, api.CodeUnauthorized, "a valid admin bearer token is required")
			return
		}
		c.Next()
	}
}
