package apidoc_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/apidoc"
)

// TestDocsPageCurrent: docs/api.html, the reference page kept in the repository, is what
// `make docs-api` writes from the description served today: a change to
// internal/api/openapi.yaml without the page fails here.
func TestDocsPageCurrent(t *testing.T) {
	t.Parallel()
	kept, err := os.ReadFile("../../docs/api.html")
	if err != nil {
		t.Fatal(err)
	}
	page, err := apidoc.Render(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, page) {
		t.Error("docs/api.html is not the page the description renders: run make docs-api")
	}
}
