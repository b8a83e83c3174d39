package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
)

// contentTypeYAML is the media type of the served description (RFC 9512).
const contentTypeYAML = "application/yaml"

// handleOpenAPI: GET /api/v1/openapi.yaml, the API's OpenAPI description as embedded in the
// binary. It changes only with the build, so caches may keep it for an hour.
func handleOpenAPI() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		c.Data(http.StatusOK, contentTypeYAML, api.OpenAPI)
	}
}
