package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// requireAdmin lets a request through only with "Authorization: Bearer <token>". With no
// token configured, admin routes answer 403 and say why. The comparison is constant-time
// (over SHA-256 digests, so not even the token's length leaks).
func requireAdmin(token string) gin.HandlerFunc {
	want := sha256.Sum256([]byte(token))
	return func(c *gin.Context) {
		if token == "" {
			abortProblem(c, api.CodeAdminDisabled,
				"admin routes are disabled: the server has no ADMIN_TOKEN")
			return
		}
		got, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			c.Header("WWW-Authenticate", `Bearer realm="seckill admin"`)
			abortProblem(c, api.CodeUnauthorized, "a valid admin bearer token is required")
			return
		}
		c.Next()
	}
}
