// Package contract checks HTTP exchanges with the API against its OpenAPI description,
// internal/api/openapi.yaml, with kin-openapi's openapi3filter. Tests wrap the transport
// of their HTTP clients with Transport: every answer is validated against the operation's
// responses (status, headers, body), and every request that is not refused against the
// operation's parameters, body and security, and a violation fails the test. It is test-only: no binary imports it.
//
// A request the description calls invalid must be refused: it is a violation only when its
// answer is not a 4xx. Tests of bad input send such requests on purpose and get their 400,
// so they pass unmarked, while a description stricter than the server (a request it
// refuses that the server accepts) or a server laxer than the description fails. A path or
// method the description does not list must be answered by its RouteNotFound (404) or
// MethodNotAllowed (405) response.
package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/seckill/seckill/internal/api"
)

// Load loads and validates the description and returns it with a router of its operations.
// The result is shared: callers must not modify it.
var Load = sync.OnceValues(func() (*Description, error) {
	return Parse(api.OpenAPI)
})

// Description is a loaded, validated OpenAPI description and the router of its operations.
// It is safe for concurrent use.
type Description struct {
	Doc     *openapi3.T
	router  routers.Router
	unknown *openapi3.Operation // the answers to a path or method not listed

	headers    []string // every response header the description names, and Content-Type
	valid      sync.Map // answerKey -> true: answers found valid
	remembered atomic.Int64
}

// Parse loads an OpenAPI description from data and validates it.
func Parse(data []byte) (*Description, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load description: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate description: %w", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route description: %w", err)
	}
	unknown := openapi3.NewOperation()
	for status, name := range map[int]string{http.StatusNotFound: "RouteNotFound", http.StatusMethodNotAllowed: "MethodNotAllowed"} {
		r := doc.Components.Responses[name]
		if r == nil {
			return nil, fmt.Errorf("description has no response %s", name)
		}
		unknown.AddResponse(status, r.Value)
	}
	return &Description{Doc: doc, router: router, unknown: unknown, headers: headerNames(doc)}, nil
}

// headerNames is every response header doc names, and Content-Type, sorted.
func headerNames(doc *openapi3.T) []string {
	names := map[string]bool{"Content-Type": true}
	add := func(rs map[string]*openapi3.ResponseRef) {
		for _, r := range rs {
			for h := range r.Value.Headers {
				names[http.CanonicalHeaderKey(h)] = true
			}
		}
	}
	add(doc.Components.Responses)
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			add(op.Responses.Map())
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// requestOptions: the admin scheme is checked for the header's shape only (the server knows
// the token); defaults are not written into the copy of the request validated.
var requestOptions = withShortErrors(&openapi3filter.Options{
	AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
		if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
			return errors.New("no bearer token")
		}
		return nil
	},
	SkipSettingDefaults: true,
	MultiError:          true,
})

// responseOptions: a status the operation does not list is a violation.
var responseOptions = withShortErrors(&openapi3filter.Options{IncludeResponseStatus: true, MultiError: true})

// withShortErrors makes o's schema errors one line each, where the value failed and why,
// instead of the schema and the value in full.
func withShortErrors(o *openapi3filter.Options) *openapi3filter.Options {
	o.WithCustomSchemaErrorFunc(func(err *openapi3.SchemaError) string {
		return "/" + strings.Join(err.JSONPointer(), "/") + ": " + err.Reason
	})
	return o
}

// Check validates one exchange: req with its body reqBody, answered resp with its body
// respBody (resp.Body is not read). It returns nil when the exchange keeps the contract, and
// otherwise an error naming the route and status. The request is validated only when its
// answer is not a refusal (4xx), and an answer already found valid is not validated again.
func (d *Description) Check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) error {
	ctx := context.Background()
	route, params, err := d.router.FindRoute(req)
	// Not listed: must be answered 404 not_found or 405 method_not_allowed. kin-openapi's
	// router finds a listed path in one with a trailing slash, which the description does not.
	if err != nil || strings.HasSuffix(req.URL.Path, "/") != strings.HasSuffix(route.Path, "/") {
		route = &routers.Route{Spec: d.Doc, Path: req.URL.Path, Method: req.Method, Operation: d.unknown}
	}
	in := &openapi3filter.RequestValidationInput{Request: cloneWith(req, reqBody), PathParams: params, Route: route, Options: requestOptions}
	name := fmt.Sprintf("%s %s -> %d", req.Method, route.Path, resp.StatusCode)
	key := d.answerKey(req.Method, route.Path, resp, respBody)
	if _, ok := d.valid.Load(key); !ok {
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
			Body: io.NopCloser(bytes.NewReader(respBody)), Options: responseOptions,
		}
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			return fmt.Errorf("%s: answer: %w", name, err)
		}
		if d.remembered.Add(1) <= maxRemembered {
			d.valid.Store(key, true)
		}
	}
	if route.Operation == d.unknown || resp.StatusCode >= 400 && resp.StatusCode <= 499 {
		return nil // a refusal: whatever the description says of the request, it agrees
	}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		return fmt.Errorf("%s: a request the description refuses was not refused: %w", name, err)
	}
	return nil
}

// maxRemembered bounds how many valid answers a Description remembers.
const maxRemembered = 4096

// answerKey is what validating an answer depends on: the operation, the status, the headers
// the description names, and the body. Validation is costly (kin-openapi compiles a JSON
// Schema 2020-12 validator each time: BenchmarkCheck), and most answers of a sale repeat
// (409 sold_out), so an answer found valid once is not validated again.
func (d *Description) answerKey(method, path string, resp *http.Response, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %d", method, path, resp.StatusCode)
	for _, h := range d.headers {
		fmt.Fprintf(&b, "\x00%q", resp.Header.Values(h))
	}
	b.WriteString("\x00")
	b.Write(requestIDs.ReplaceAll(body, []byte(`"request_id":"~"`)))
	return b.String()
}

// requestIDs matches a problem body's request_id that keeps the description's pattern for
// it. Every answer has its own id, so answerKey puts one placeholder for all of them: else no
// answer would be found valid before (a crowd's thousands of sold-out problems were each
// validated again, and under -race that starved the servers of the tests of CPU). An id
// that breaks the pattern is left as it is, so that its answer is validated.
var requestIDs = regexp.MustCompile(`"request_id":"[A-Za-z0-9._:/+=@-]{1,128}"`)

// cloneWith is a shallow copy of req whose body reads b.
func cloneWith(req *http.Request, b []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return r
}
