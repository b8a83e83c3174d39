package api

import (
	"bytes"
	"slices"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// loadOpenAPI loads and validates the embedded description with kin-openapi.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("validate openapi.yaml: %v", err)
	}
	return doc
}

// TestOpenAPIValid: the description loads and validates as OpenAPI 3.1, and kin-openapi
// treats it as such (JSON Schema 2020-12 for its schemas).
func TestOpenAPIValid(t *testing.T) {
	doc := loadOpenAPI(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %s, want 3.1", doc.OpenAPI)
	}
	if !bytes.HasPrefix(OpenAPI, []byte("openapi: 3.1.")) {
		t.Errorf("openapi.yaml does not start with its version")
	}
}

// TestOpenAPICodes: the problem schema's code enum is exactly the contract's codes, and
// every problem response of every operation answers its codes with their status (Status).
func TestOpenAPICodes(t *testing.T) {
	doc := loadOpenAPI(t)
	var enum []string
	for _, c := range doc.Components.Schemas["Problem"].Value.Properties["code"].Value.Enum {
		enum = append(enum, c.(string))
	}
	var codes []string
	for c := range statuses {
		codes = append(codes, c)
	}
	slices.Sort(enum)
	slices.Sort(codes)
	if !slices.Equal(enum, codes) {
		t.Errorf("Problem.code enum = %v, want the contract's codes %v", enum, codes)
	}

	answered := map[string]bool{}
	check := func(where, key string, r *openapi3.Response) {
		mt := r.Content.Get(ContentTypeProblem)
		if mt == nil {
			return
		}
		status, _ := strconv.Atoi(key)
		narrow := mt.Schema.Value.AllOf
		if len(narrow) != 2 || narrow[0].Ref != "#/components/schemas/Problem" {
			t.Errorf("%s %s: a problem response must be allOf [Problem, {code}]", where, key)
			return
		}
		code := narrow[1].Value.Properties["code"].Value
		cs := code.Enum
		if code.Const != nil {
			cs = append(cs, code.Const)
		}
		for _, c := range cs {
			answered[c.(string)] = true
			if got := Status(c.(string)); got != status && !slices.Contains(LoadBalancerStatuses(c.(string)), status) {
				t.Errorf("%s: %s is listed under %d, answered with %d", where, c, status, got)
			}
		}
		if status >= 429 && status != 500 && status != StatusClientClosedRequest && r.Headers["Retry-After"] == nil {
			t.Errorf("%s %d: no Retry-After header", where, status)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for key, r := range op.Responses.Map() {
				check(method+" "+path, key, r.Value)
			}
		}
	}
	for name, r := range doc.Components.Responses {
		key := map[string]string{"RouteNotFound": "404", "MethodNotAllowed": "405"}[name]
		if key != "" {
			check(name, key, r.Value)
		}
	}
	for _, c := range codes {
		if !answered[c] {
			t.Errorf("no operation answers %s", c)
		}
	}
}
