package apidoc

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// page is what the template shows: the description turned into lists in reading order.
type page struct {
	Title, Version, OpenAPI string
	Doc                     docText
	Routes                  []route
	Ops                     int
	Codes                   []code
	Schemes                 []scheme
	// Problem is the component schema with a code property, shown once under the codes.
	Problem       string
	ProblemFields []field
}

// route is a path and its operations, the table of contents' unit.
type route struct {
	Path string
	Ops  []*operation
}

type operation struct {
	ID, Method, Path, Summary string
	Doc                       docText
	Deprecated                bool
	// Security lists the alternatives, each the schemes that must all be satisfied; empty
	// means no credentials.
	Security  [][]scheme
	Params    []param
	Body      *body
	Responses []response
}

type param struct {
	Name, In, Type string
	Required       bool
	Doc            docText
	Rules          []string
}

type body struct {
	Required bool
	Doc      docText
	Media    []media
}

type media struct {
	Type, Schema string
	Fields       []field
	Codes        []string
}

type response struct {
	ID, Status, Text string
	Doc              docText
	Headers          []param
	Media            []media
	Codes            []string
}

type code struct {
	Name     string
	Doc      docText
	Statuses []string
	Ops      []opRef
}

type opRef struct{ ID, Label string }

type scheme struct {
	Name, How string
	Doc       docText
}

// methods is the order of an operation within its route.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "QUERY"}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// build turns the description into the page.
func build(doc *openapi3.T) page {
	p := page{OpenAPI: doc.OpenAPI}
	if doc.Info != nil {
		p.Title, p.Version, p.Doc = doc.Info.Title, doc.Info.Version, docOf(doc.Info.Description)
	}
	all, codeDocs, problem := allCodes(doc)
	if problem != nil {
		p.Problem, p.ProblemFields = componentName(problem.Ref), fields(problem)
	}
	codes := map[string]*code{}
	for _, c := range all {
		codes[c] = &code{Name: c, Doc: docOf(codeDocs[c])}
	}
	var paths []string
	if doc.Paths != nil {
		paths = slices.Sorted(maps.Keys(doc.Paths.Map()))
	}
	for _, path := range paths {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		r := route{Path: path}
		for _, m := range slices.SortedFunc(maps.Keys(ops), byMethod) {
			op := newOperation(doc, path, m, item, ops[m], len(all))
			r.Ops = append(r.Ops, op)
			p.Ops++
			for _, resp := range op.Responses {
				for _, c := range resp.Codes {
					k := codes[c]
					if k == nil {
						k = &code{Name: c}
						codes[c] = k
					}
					if !slices.Contains(k.Statuses, resp.Status) {
						k.Statuses = append(k.Statuses, resp.Status)
					}
					k.Ops = append(k.Ops, opRef{ID: resp.ID, Label: op.Method + " " + op.Path})
				}
			}
		}
		p.Routes = append(p.Routes, r)
	}
	for _, name := range slices.Sorted(maps.Keys(codes)) {
		c := codes[name]
		slices.Sort(c.Statuses)
		p.Codes = append(p.Codes, *c)
	}
	if doc.Components != nil {
		for _, name := range slices.Sorted(maps.Keys(doc.Components.SecuritySchemes)) {
			if s := doc.Components.SecuritySchemes[name]; s != nil && s.Value != nil {
				p.Schemes = append(p.Schemes, scheme{Name: name, How: how(s.Value), Doc: docOf(s.Value.Description)})
			}
		}
	}
	return p
}

func byMethod(a, b string) int {
	ia, ib := slices.Index(methods, a), slices.Index(methods, b)
	if ia < 0 || ib < 0 {
		return strings.Compare(a, b)
	}
	return ia - ib
}

func newOperation(doc *openapi3.T, path, method string, item *openapi3.PathItem, o *openapi3.Operation, nCodes int) *operation {
	op := &operation{Method: method, Path: path, Summary: o.Summary, Doc: docOf(o.Description), Deprecated: o.Deprecated}
	op.ID = "op-" + nonWord.ReplaceAllString(o.OperationID, "-")
	if o.OperationID == "" {
		op.ID = "op-" + strings.ToLower(method) + "-" + strings.Trim(nonWord.ReplaceAllString(path, "-"), "-")
	}
	security := doc.Security
	if o.Security != nil {
		security = *o.Security
	}
	for _, req := range security {
		var all []scheme
		for _, name := range slices.Sorted(maps.Keys(req)) {
			s := scheme{Name: name}
			if doc.Components != nil && doc.Components.SecuritySchemes[name] != nil && doc.Components.SecuritySchemes[name].Value != nil {
				s.How = how(doc.Components.SecuritySchemes[name].Value)
			}
			all = append(all, s)
		}
		if len(all) > 0 {
			op.Security = append(op.Security, all)
		}
	}
	// Path-level parameters, unless the operation redefines one (same name and place).
	params := map[string]*openapi3.Parameter{}
	var order []string
	for _, list := range []openapi3.Parameters{item.Parameters, o.Parameters} {
		for _, pr := range list {
			if pr == nil || pr.Value == nil {
				continue
			}
			k := pr.Value.In + " " + pr.Value.Name
			if _, ok := params[k]; !ok {
				order = append(order, k)
			}
			params[k] = pr.Value
		}
	}
	for _, k := range order {
		op.Params = append(op.Params, newParam(params[k]))
	}
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		rb := o.RequestBody.Value
		op.Body = &body{Required: rb.Required, Doc: docOf(rb.Description), Media: newMedia(rb.Content, nCodes)}
	}
	if o.Responses != nil {
		rs := o.Responses.Map()
		for _, status := range slices.Sorted(maps.Keys(rs)) {
			if rs[status] == nil || rs[status].Value == nil {
				continue
			}
			rv := rs[status].Value
			r := response{ID: op.ID + "-" + status, Status: status, Text: statusText(status), Media: newMedia(rv.Content, nCodes)}
			if rv.Description != nil {
				r.Doc = docOf(*rv.Description)
			}
			for _, name := range slices.Sorted(maps.Keys(rv.Headers)) {
				if h := rv.Headers[name]; h != nil && h.Value != nil {
					hp := newParam(&h.Value.Parameter)
					hp.Name, hp.In = name, "header"
					r.Headers = append(r.Headers, hp)
				}
			}
			for _, m := range r.Media {
				for _, c := range m.Codes {
					if !slices.Contains(r.Codes, c) {
						r.Codes = append(r.Codes, c)
					}
				}
			}
			op.Responses = append(op.Responses, r)
		}
	}
	return op
}

func newParam(pr *openapi3.Parameter) param {
	p := param{Name: pr.Name, In: pr.In, Required: pr.Required, Doc: docOf(pr.Description), Type: "any"}
	if pr.Schema != nil && pr.Schema.Value != nil {
		p.Type, p.Rules = typeName(pr.Schema), rules(pr.Schema.Value)
	}
	if pr.Deprecated {
		p.Rules = append(p.Rules, "deprecated")
	}
	return p
}

func statusText(status string) string {
	n, err := strconv.Atoi(status)
	switch {
	case status == "default":
		return "any other status"
	case err != nil:
		return fmt.Sprintf("any %sxx status", status[:1])
	case n == 499:
		return "Client Closed Request" // nginx's, which net/http does not name
	}
	return http.StatusText(n)
}

// how says how a security scheme is satisfied, for people.
func how(s *openapi3.SecurityScheme) string {
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		return "Authorization: Bearer <token>"
	case s.Type == "http":
		return "HTTP " + s.Scheme + " authentication"
	case s.Type == "apiKey":
		return "an API key in the " + s.In + " " + s.Name
	}
	return s.Type
}
