package observecheck_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
)

// labelValues is a Grafana query variable's query: label_values(<series selector>, <label>).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([A-Za-z_][A-Za-z0-9_]*)\)$`)

// checkVariables asks Prometheus, over the sale, for the values of each query variable of each
// dashboard, as Grafana does (the label's values on the series the selector matches): each
// variable must have some.
func (q *querier) checkVariables() {
	q.t.Helper()
	for _, file := range glob(q.t, filepath.Join(deploy, "grafana/dashboards/*.json")) {
		b, err := os.ReadFile(file)
		if err != nil {
			q.t.Fatal(err)
		}
		var d struct {
			Templating struct {
				List []struct {
					Name, Type string
					Query      json.RawMessage // a query variable's: {"query": "label_values(...)"}
				}
			}
		}
		if err := json.Unmarshal(b, &d); err != nil {
			q.t.Fatalf("%s: %v", file, err)
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			q.checked++
			var query struct{ Query string }
			_ = json.Unmarshal(v.Query, &query)
			m := labelValues.FindStringSubmatch(query.Query)
			if m == nil {
				q.t.Errorf("variable %s: query %s is not label_values(selector, label)", v.Name, v.Query)
				continue
			}
			var res struct {
				Status, Error string
				Data          []string
			}
			q.get("/api/v1/label/"+m[2]+"/values?"+url.Values{"match[]": {m[1]}, "start": {unix(q.start)}, "end": {unix(q.end)}}.Encode(), &res)
			if res.Status != "success" || len(res.Data) == 0 {
				q.t.Errorf("variable %s: %s has no values during the sale (%s %s)", v.Name, query.Query, res.Status, res.Error)
				continue
			}
			q.t.Logf("variable %s: %v", v.Name, res.Data)
		}
	}
}
