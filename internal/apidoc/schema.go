package apidoc

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// field is one row of a schema's table: a property (nested ones named with dots, array
// items with []), or the schema itself when it is not an object.
type field struct {
	Name     string
	Type     string
	Required bool
	Doc      docText
	Rules    []string // enum, bounds, default, pattern, ...
}

// maxDepth bounds how deep fields descends into nested objects; a schema that refers to
// itself stops at the first repetition anyway.
const maxDepth = 6

// fields flattens s into rows: one per property, with nested objects' and array items'
// properties below their parent. allOf parts are merged; oneOf and anyOf are shown as their
// alternatives' types.
func fields(s *openapi3.SchemaRef) []field {
	if s == nil || s.Value == nil {
		return nil
	}
	var out []field
	var walk func(prefix string, s *openapi3.SchemaRef, depth int, seen []*openapi3.Schema)
	walk = func(prefix string, s *openapi3.SchemaRef, depth int, seen []*openapi3.Schema) {
		v := s.Value
		if depth > maxDepth || slices.Contains(seen, v) {
			return
		}
		seen = append(seen, v)
		props, required := merged(v)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			p := props[n]
			out = append(out, field{Name: prefix + n, Type: typeName(p), Required: slices.Contains(required, n),
				Doc: docOf(p.Value.Description), Rules: rules(p.Value)})
			if p.Value.Items != nil && p.Value.Items.Value != nil {
				walk(prefix+n+"[].", p.Value.Items, depth+1, seen)
			} else {
				walk(prefix+n+".", p, depth+1, seen)
			}
		}
	}
	v := s.Value
	if props, _ := merged(v); len(props) == 0 {
		// Not an object: its type says it all, but an array's items may have fields.
		if v.Items != nil && v.Items.Value != nil {
			walk("[].", v.Items, 1, nil)
		}
		return out
	}
	walk("", s, 0, nil)
	return out
}

// merged returns the properties and required names of v and of its allOf parts; a property
// named in several parts takes the last part's schema merged over the first's enum (the
// parts narrow it: allOf).
func merged(v *openapi3.Schema) (map[string]*openapi3.SchemaRef, []string) {
	props := map[string]*openapi3.SchemaRef{}
	required := slices.Clone(v.Required)
	for n, p := range v.Properties {
		if p != nil && p.Value != nil {
			props[n] = p
		}
	}
	for _, part := range v.AllOf {
		if part == nil || part.Value == nil {
			continue
		}
		pp, pr := merged(part.Value)
		required = append(required, pr...)
		for n, p := range pp {
			if old, ok := props[n]; ok {
				props[n] = narrow(old, p)
			} else {
				props[n] = p
			}
		}
	}
	return props, required
}

// narrow combines two schemas of one property that must both hold (allOf): the one that
// says more wins, and its values are those both allow.
func narrow(a, b *openapi3.SchemaRef) *openapi3.SchemaRef {
	va, vb := values(a.Value), values(b.Value)
	base := a
	if typeName(a) == "any" || (a.Value.Description == "" && b.Value.Description != "") {
		base = b
	}
	if va == nil || vb == nil {
		if va == nil && vb != nil {
			c := *base.Value
			c.Enum, c.OneOf, c.AnyOf = anys(vb), nil, nil
			return &openapi3.SchemaRef{Ref: base.Ref, Value: &c}
		}
		return base
	}
	var both []string
	for _, x := range va {
		if slices.Contains(vb, x) {
			both = append(both, x)
		}
	}
	c := *base.Value
	c.Enum, c.OneOf, c.AnyOf = anys(both), nil, nil
	if c.Type.IsEmpty() {
		c.Type = a.Value.Type
		if c.Type.IsEmpty() {
			c.Type = b.Value.Type
		}
	}
	return &openapi3.SchemaRef{Ref: base.Ref, Value: &c}
}

// values returns the values a schema allows when it lists them: its enum, its const, or the
// consts of its oneOf or anyOf alternatives; nil when it does not list them.
func values(v *openapi3.Schema) []string {
	if v == nil {
		return nil
	}
	var out []string
	switch {
	case len(v.Enum) > 0:
		for _, e := range v.Enum {
			out = append(out, fmt.Sprint(e))
		}
	case v.Const != nil:
		out = append(out, fmt.Sprint(v.Const))
	default:
		for _, alt := range append(slices.Clone(v.OneOf), v.AnyOf...) {
			if alt == nil || alt.Value == nil {
				continue
			}
			vs := values(alt.Value)
			if vs == nil {
				return nil // an alternative that is not a list of values
			}
			out = append(out, vs...)
		}
	}
	return out
}

// valueDocs returns what a schema says of each of its values: the descriptions of oneOf or
// anyOf alternatives that are a const, or an x-enum-descriptions (or x-enumDescriptions)
// extension, a map from value to text or a list in the enum's order.
func valueDocs(v *openapi3.Schema) map[string]string {
	docs := map[string]string{}
	for _, alt := range append(slices.Clone(v.OneOf), v.AnyOf...) {
		if alt != nil && alt.Value != nil && alt.Value.Const != nil && alt.Value.Description != "" {
			docs[fmt.Sprint(alt.Value.Const)] = alt.Value.Description
		}
	}
	for _, key := range []string{"x-enum-descriptions", "x-enumDescriptions"} {
		switch ext := v.Extensions[key].(type) {
		case map[string]any:
			for k, d := range ext {
				docs[k] = fmt.Sprint(d)
			}
		case []any:
			for i, d := range ext {
				if i < len(v.Enum) {
					docs[fmt.Sprint(v.Enum[i])] = fmt.Sprint(d)
				}
			}
		}
	}
	return docs
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// typeName describes a schema's type for people: "integer (int64)", "array of string",
// "object Product" for a component, "string or null".
func typeName(s *openapi3.SchemaRef) string {
	if s == nil || s.Value == nil {
		return "any"
	}
	v := s.Value
	var ts []string
	for _, t := range v.Type.Slice() {
		switch {
		case t == "array" && v.Items != nil:
			ts = append(ts, "array of "+typeName(v.Items))
		case t != "null" && v.Format != "":
			ts = append(ts, t+" ("+v.Format+")")
		default:
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		var alts []string
		for _, alt := range append(slices.Clone(v.OneOf), v.AnyOf...) {
			if alt != nil && alt.Value != nil && alt.Value.Const != nil {
				continue // a listed value: shown as such, not as a type
			}
			alts = append(alts, typeName(alt))
		}
		ts = append(ts, alts...)
		for _, part := range v.AllOf {
			// allOf narrows its parts: the first part that names a type names it.
			if name := typeName(part); len(ts) == 0 && name != "any" {
				ts = append(ts, name)
			}
		}
		if len(ts) == 0 && len(v.Properties) > 0 {
			ts = append(ts, "object")
		}
	}
	if v.Nullable {
		ts = append(ts, "null")
	}
	name := strings.Join(ts, " or ")
	if name == "" {
		name = "any"
		if v.Const != nil || len(values(v)) > 0 {
			name = "string"
		}
	}
	if ref := componentName(s.Ref); ref != "" {
		name += " " + ref
	}
	return name
}

// componentName is the last part of a local $ref, "#/components/schemas/Product" ->
// "Product".
func componentName(ref string) string {
	if ref == "" {
		return ""
	}
	return ref[strings.LastIndex(ref, "/")+1:]
}

// rules lists what a schema requires of a value, for people: "one of: a, b", "1 to 200
// characters", "≥ 1", "default: dlock".
func rules(v *openapi3.Schema) []string {
	var out []string
	if vs := values(v); len(vs) == 1 && v.Const != nil {
		out = append(out, "always "+vs[0])
	} else if len(vs) > 0 {
		out = append(out, "one of: "+strings.Join(vs, ", "))
	}
	switch {
	case v.Min != nil && v.Max != nil:
		out = append(out, num(*v.Min)+" to "+num(*v.Max))
	case v.Min != nil:
		out = append(out, "≥ "+num(*v.Min))
	case v.Max != nil:
		out = append(out, "≤ "+num(*v.Max))
	}
	if v.MinLength > 0 || v.MaxLength != nil {
		r := fmt.Sprintf("at least %d characters", v.MinLength)
		if v.MaxLength != nil {
			r = fmt.Sprintf("%d to %d characters", v.MinLength, *v.MaxLength)
		}
		out = append(out, r)
	}
	if v.MinItems > 0 || v.MaxItems != nil {
		r := fmt.Sprintf("at least %d items", v.MinItems)
		if v.MaxItems != nil {
			r = fmt.Sprintf("%d to %d items", v.MinItems, *v.MaxItems)
		}
		out = append(out, r)
	}
	if v.UniqueItems {
		out = append(out, "items distinct")
	}
	if v.Pattern != "" {
		out = append(out, "matches "+v.Pattern)
	}
	if v.Default != nil {
		out = append(out, "default: "+jsonText(v.Default))
	}
	if v.ReadOnly {
		out = append(out, "read-only")
	}
	if v.Deprecated {
		out = append(out, "deprecated")
	}
	if v.AdditionalProperties.Has != nil && !*v.AdditionalProperties.Has {
		out = append(out, "no other fields")
	}
	return out
}

func num(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.10g", f), ".0") }

func jsonText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}
