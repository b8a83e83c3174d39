// Package apidoc renders the API's OpenAPI description (internal/api/openapi.yaml) as one
// self-contained HTML page to read it by: a table of contents by route, then each
// operation's parameters, request body, responses (with their headers, fields and problem
// codes) and the credentials it needs, and the error codes and security schemes, each with
// an anchor. The page has its CSS inline and no script, and its Content-Security-Policy
// forbids every load, so it opens from disk with no network. `make docs-api` writes it with
// the command in cmd/apidoc.
package apidoc

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed style.css
	styleCSS string
)

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(pageHTML))

// Render loads spec, an OpenAPI 3.0 or 3.1 description in YAML or JSON, checks that it is
// valid, and returns the page. Descriptions are shown as text (paragraphs and `code`
// spans), escaped: nothing in spec becomes markup. It is safe for concurrent use.
func Render(spec []byte) ([]byte, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("load the description: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate the description: %w", err)
	}
	var buf bytes.Buffer
	err = pageTmpl.Execute(&buf, struct {
		page
		CSS template.CSS
	}{build(doc), template.CSS(styleCSS)}) // our own embedded CSS
	if err != nil {
		return nil, fmt.Errorf("render the page: %w", err)
	}
	return buf.Bytes(), nil
}
