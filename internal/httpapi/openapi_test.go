package httpapi_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// server is the API's handler with no backing services: enough for the routes that need none.
func server() http.Handler {
	return httpapi.NewServer(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Metrics: http.NotFoundHandler()})
}

// TestOpenAPICoversRoutes: the description lists every route the server serves, and no
// other.
func TestOpenAPICoversRoutes(t *testing.T) {
	d, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`:([a-z_]+)`)
	var served, described []string
	for _, r := range server().(*gin.Engine).Routes() {
		served = append(served, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	for path, item := range d.Doc.Paths.Map() {
		for method := range item.Operations() {
			described = append(described, method+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(described)
	if !slices.Equal(served, described) {
		t.Errorf("routes served:\n  %s\ndescribed in internal/api/openapi.yaml:\n  %s",
			strings.Join(served, "\n  "), strings.Join(described, "\n  "))
	}
}

// TestOpenAPIServed: GET /api/v1/openapi.yaml answers the embedded description as YAML,
// cacheable, and the answer keeps the description it serves.
func TestOpenAPIServed(t *testing.T) {
	srv := httptest.NewServer(server())
	defer srv.Close()
	resp, err := contract.Client(t, nil).Get(srv.URL + api.OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, api.OpenAPI) {
		t.Fatalf("GET %s = %s, %d bytes, want 200 and the %d bytes of api.OpenAPI", api.OpenAPIPath, resp.Status, len(body), len(api.OpenAPI))
	}
	if got, want := resp.Header.Get("Content-Type"), "application/yaml"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got := resp.Header.Get("Cache-Control"); !strings.Contains(got, "max-age=") {
		t.Errorf("Cache-Control = %q, want a max-age", got)
	}
}
