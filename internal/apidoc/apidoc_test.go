package apidoc_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/seckill/seckill/internal/apidoc"
	"github.com/seckill/seckill/internal/testenv/missing"
)

// realSpec is the API's own description, relative to this package; the tests that render it
// skip while it does not exist.
const realSpec = "../../internal/api/openapi.yaml"

func readSpec(t *testing.T, path string) []byte {
	t.Helper()
	spec, err := os.ReadFile(path)
	if os.IsNotExist(err) && path == realSpec {
		missing.Skipf(t, "%s does not exist yet", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func render(t *testing.T, spec []byte) string {
	t.Helper()
	page, err := apidoc.Render(spec)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return string(page)
}

// TestRenderCoversTheDescription renders the fixture and the API's own description and
// checks the page against the description as kin-openapi loads it: every route, every
// operation with its anchor and TOC link, every response status, every response header,
// every code of the problem schema with its anchor, and every security scheme. The page
// must load nothing.
func TestRenderCoversTheDescription(t *testing.T) {
	for _, path := range []string{"testdata/fixture.yaml", realSpec} {
		t.Run(path, func(t *testing.T) {
			spec := readSpec(t, path)
			page := render(t, spec)
			doc, err := openapi3.NewLoader().LoadFromData(spec)
			if err != nil {
				t.Fatal(err)
			}
			checkCovers(t, doc, page)
			checkLoadsNothing(t, page)
		})
	}
}

func checkCovers(t *testing.T, doc *openapi3.T, page string) {
	t.Helper()
	ops := 0
	for path, item := range doc.Paths.Map() {
		if !strings.Contains(page, "<h2><code>"+escape(path)+"</code></h2>") {
			t.Errorf("no section for the route %s", path)
		}
		for method, op := range item.Operations() {
			ops++
			id := opID(method, path, op)
			if !strings.Contains(page, `<article class="op" id="`+id+`" data-method="`+method+`"`) {
				t.Errorf("%s %s: no article with id %s", method, path, id)
			}
			if !strings.Contains(page, `<a href="#`+id+`">`) {
				t.Errorf("%s %s: no link to #%s in the contents", method, path, id)
			}
			for status, resp := range op.Responses.Map() {
				if !strings.Contains(page, `id="`+id+"-"+status+`" data-status="`+status+`"`) {
					t.Errorf("%s %s: no response %s", method, path, status)
				}
				for name := range resp.Value.Headers {
					if !strings.Contains(page, "<tr><td><code>"+escape(name)+"</code></td>") {
						t.Errorf("%s %s %s: no header %s", method, path, status, name)
					}
				}
			}
		}
	}
	if got := regexp.MustCompile(`<article class="op" `).FindAllStringIndex(page, -1); len(got) != ops {
		t.Errorf("%d operations on the page, want %d", len(got), ops)
	}
	codes := problemCodes(doc)
	if len(codes) == 0 {
		t.Error("the description lists no problem codes")
	}
	for _, c := range codes {
		if !strings.Contains(page, `<tr id="error-`+c+`">`) {
			t.Errorf("no anchor error-%s", c)
		}
	}
	for name := range doc.Components.SecuritySchemes {
		if !strings.Contains(page, `id="security-`+name+`"`) {
			t.Errorf("no section for the security scheme %s", name)
		}
	}
}

// opID is the anchor the page gives an operation, as its doc says: op- and the
// operationId, or the method and path.
func opID(method, path string, op *openapi3.Operation) string {
	nonWord := regexp.MustCompile(`[^A-Za-z0-9_-]+`)
	if op.OperationID != "" {
		return "op-" + nonWord.ReplaceAllString(op.OperationID, "-")
	}
	return "op-" + strings.ToLower(method) + "-" + strings.Trim(nonWord.ReplaceAllString(path, "-"), "-")
}

// problemCodes returns the values that the components' schemas allow for a property named
// code, whether written as an enum or as oneOf consts, through allOf.
func problemCodes(doc *openapi3.T) []string {
	var codes []string
	var collect func(s *openapi3.Schema)
	collect = func(s *openapi3.Schema) {
		for _, e := range s.Enum {
			codes = append(codes, e.(string))
		}
		if c, ok := s.Const.(string); ok {
			codes = append(codes, c)
		}
		for _, alt := range append(slices.Clone(s.OneOf), s.AnyOf...) {
			collect(alt.Value)
		}
	}
	for _, s := range doc.Components.Schemas {
		if c := s.Value.Properties["code"]; c != nil {
			collect(c.Value)
		}
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// checkLoadsNothing fails if the page could load anything: a script, a stylesheet, a
// font, an image, a frame, by any URL, or a CSS url() or @import. Links (<a href>) are not
// loads.
func checkLoadsNothing(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "<video", "<audio",
		"<source", "@import", "url(", "src=", "srcset=", "@font-face"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q: it must load nothing", bad)
		}
	}
	if m := regexp.MustCompile(`(?i)(href|src|action)\s*=\s*"?(https?:|//)`).FindString(page); m != "" {
		t.Errorf("the page refers to the network: %s", m)
	}
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'"`) {
		t.Error("the page lacks its Content-Security-Policy that forbids every load")
	}
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// TestRenderFixture checks what the fixture says of its operations: the codes of each
// problem response (narrowed with allOf, or from the examples where the schema allows
// every code), the headers, the credentials, the request body's fields and rules, and the
// codes' own descriptions.
func TestRenderFixture(t *testing.T) {
	page := render(t, readSpec(t, "testdata/fixture.yaml"))
	section := func(id string) string {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no element with id %s", id)
		}
		end := strings.Index(page[i:], "</div>")
		if end < 0 {
			end = len(page) - i
		}
		return page[i : i+end]
	}
	codes := func(id string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<a href="#error-([a-z_]+)">`).FindAllStringSubmatch(section(id), -1) {
			out = append(out, m[1])
		}
		return out
	}
	for id, want := range map[string][]string{
		"op-purchase-409":      {"sold_out", "already_purchased"},
		"op-purchase-429":      {"rate_limited"}, // the schema allows all: the examples' codes
		"op-purchase-503":      {"busy", "unavailable"},
		"op-purchase-404":      {"product_not_found"},
		"op-orderOf-404":       {"product_not_found", "order_not_found"},
		"op-createProduct-401": {"unauthorized"},
		"op-createProduct-400": {"invalid_request"},
	} {
		got := codes(id)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: codes %v, want %v", id, got, want)
		}
	}
	for id, header := range map[string]string{"op-purchase-429": "Retry-After", "op-purchase-503": "Retry-After", "op-createProduct-201": "Location"} {
		if !strings.Contains(section(id), "<code>"+header+"</code>") {
			t.Errorf("%s: no %s header", id, header)
		}
	}
	if !strings.Contains(section("op-createProduct"), `Requires <a href="#security-admin">admin</a>: <code>Authorization: Bearer &lt;token&gt;</code>`) {
		t.Error("createProduct does not say it needs the admin bearer token")
	}
	if !strings.Contains(section("op-healthz"), "No credentials.") {
		t.Error("healthz (security: []) does not say it needs no credentials")
	}
	for _, want := range []string{
		`<tr><td><code>strategy</code></td><td>string</td><td class="req">optional</td><td><p class="rules">one of: dlock, naive, pessimistic; default: &#34;dlock&#34;</p></td></tr>`,
		`<tr><td><code>name</code></td><td>string</td><td class="req">required</td><td><p class="rules">1 to 200 characters</p></td></tr>`,
		`<tr><td><code>product.stock</code></td><td>integer</td><td class="req">required</td>`, // a $ref inside a $ref
		`<tr id="error-already_purchased"><td><code>already_purchased</code></td><td>409</td><td><p>One per user; <code>order_id</code> names it.</p></td>`,
		`<tr><td><code>verbose</code></td><td>query</td><td>boolean</td><td class="req">optional</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestRenderEscapes: markup in a description is shown as text, never run or rendered.
func TestRenderEscapes(t *testing.T) {
	page := render(t, readSpec(t, "testdata/fixture.yaml"))
	for _, want := range []string{
		"<h1>Fixture &lt;shop&gt; API</h1>",
		"<p>A shop that sells <code>widgets</code> &amp; &lt;gadgets&gt;.</p><p>Second paragraph with a &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; in it.</p>",
		"More detail, &lt;b&gt;maybe&lt;/b&gt;.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script>", "<gadgets>", "<b>maybe"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %s unescaped", bad)
		}
	}
}

// TestRenderEnumCodes: a problem schema written with a plain enum, its values described by
// x-enum-descriptions, and a response with no narrowing and no examples, which then lists
// every code.
func TestRenderEnumCodes(t *testing.T) {
	page := render(t, []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      responses:
        "503":
          description: down
          content:
            application/problem+json:
              schema: {$ref: "#/components/schemas/Problem"}
components:
  schemas:
    Problem:
      type: object
      properties:
        code:
          type: string
          enum: [busy, unavailable]
          x-enum-descriptions: ["The lock was busy.", "A store is down."]
`))
	for _, want := range []string{
		`<a href="#op-get-x">`,
		`codes: <span class="codes"><a href="#error-busy"><code>busy</code></a> <a href="#error-unavailable"><code>unavailable</code></a> </span>`,
		`<tr id="error-busy"><td><code>busy</code></td><td>503</td><td><p>The lock was busy.</p></td>`,
		`<tr id="error-unavailable"><td><code>unavailable</code></td><td>503</td><td><p>A store is down.</p></td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestRenderRefusesInvalid: a description that does not load, or loads but is not valid
// OpenAPI, gives no page.
func TestRenderRefusesInvalid(t *testing.T) {
	for name, spec := range map[string]string{
		"not YAML":        "openapi: [",
		"no info":         "openapi: 3.1.0\npaths: {}\n",
		"a dangling $ref": "openapi: 3.1.0\ninfo: {title: t, version: \"1\"}\npaths:\n  /x:\n    get:\n      responses:\n        \"200\": {$ref: \"#/components/responses/Nope\"}\n",
	} {
		if page, err := apidoc.Render([]byte(spec)); err == nil {
			t.Errorf("%s: Render gave a page of %d bytes, want an error", name, len(page))
		}
	}
}
