package apidoc

import (
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// newMedia describes each media type of a body. A body whose schema has a code property
// that lists its values (a problem) carries those codes; where the schema does not narrow
// them (it allows all nCodes codes) and the media type has examples, the examples' codes.
func newMedia(content openapi3.Content, nCodes int) []media {
	var out []media
	for _, mt := range slices.Sorted(maps.Keys(content)) {
		v := content[mt]
		m := media{Type: mt}
		if v != nil && v.Schema != nil && v.Schema.Value != nil {
			m.Schema = typeName(v.Schema)
			m.Fields = fields(v.Schema)
			for _, f := range m.Fields {
				if f.Name == "code" {
					props, _ := merged(v.Schema.Value)
					m.Codes = values(props["code"].Value)
				}
			}
		}
		if v != nil && (len(m.Codes) == 0 || len(m.Codes) == nCodes) {
			if ex := exampleCodes(v); len(ex) > 0 {
				m.Codes = ex
			}
		}
		out = append(out, m)
	}
	return out
}

// exampleCodes returns the code of each of a media type's examples that is an object with
// one.
func exampleCodes(v *openapi3.MediaType) []string {
	var out []string
	add := func(x any) {
		if obj, ok := x.(map[string]any); ok {
			if c, ok := obj["code"].(string); ok && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	add(v.Example)
	for _, name := range slices.Sorted(maps.Keys(v.Examples)) {
		if e := v.Examples[name]; e != nil && e.Value != nil {
			add(e.Value.Value)
		}
	}
	return out
}

// allCodes returns the codes the components' schemas list for a property named code, what
// they say of each, and the schema that lists the most (the problem).
func allCodes(doc *openapi3.T) ([]string, map[string]string, *openapi3.SchemaRef) {
	var all []string
	docs := map[string]string{}
	var problem *openapi3.SchemaRef
	most := 0
	if doc.Components == nil {
		return nil, docs, nil
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			continue
		}
		props, _ := merged(s.Value)
		c := props["code"]
		if c == nil {
			continue
		}
		vs := values(c.Value)
		if len(vs) > most {
			most, problem = len(vs), &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: s.Value}
		}
		for _, v := range vs {
			if !slices.Contains(all, v) {
				all = append(all, v)
			}
		}
		maps.Copy(docs, valueDocs(c.Value))
	}
	slices.Sort(all)
	return all, docs, problem
}
