package app_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// TestOperationsRoutes: the routes no other test of the app asks, GET /metrics and
// GET /api/v1/openapi.yaml, answer as the description says (the stack's client checks each
// exchange against it), and the description served is the one embedded.
func TestOperationsRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	status, _, body, _, err := s.do(http.MethodGet, "/metrics", "", "")
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), "seckill_build_info") {
		t.Errorf("GET /metrics = %d %v, want 200 with seckill_build_info", status, err)
	}
	status, _, body, header, err := s.do(http.MethodGet, api.OpenAPIPath, "", "")
	if err != nil || status != http.StatusOK || !bytes.Equal(body, api.OpenAPI) || header.Get("Content-Type") != "application/yaml" {
		t.Errorf("GET %s = %d %s %v, want 200 application/yaml and api.OpenAPI", api.OpenAPIPath, status, header.Get("Content-Type"), err)
	}
}
