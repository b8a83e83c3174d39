package lab_test

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/lab"
)

// TestNamesInTheAPIContract: the API's contract (internal/api's OpenAPI description) names
// exactly the lab's locks, in a new product's lock (with "", none given) and in a product's,
// so that a lock added here and not there fails.
func TestNamesInTheAPIContract(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	for _, schema := range []string{"NewProduct", "Product"} {
		var names []string
		for _, v := range doc.Components.Schemas[schema].Value.Properties["lock"].Value.Enum {
			if s, _ := v.(string); s != "" {
				names = append(names, s)
			}
		}
		if !slices.Equal(names, lab.Names) {
			t.Errorf("%s.lock enum = %v, want lab.Names %v", schema, names, lab.Names)
		}
	}
}
