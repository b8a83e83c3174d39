package deploycheck_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboardDS is the data source every query of a dashboard names: its datasource variable,
// so that the dashboard imports into any Grafana and runs on the Prometheus picked there.
var dashboardDS = dsRef{Type: "prometheus", UID: "${datasource}"}

type dsRef struct{ Type, UID string }

type variable struct {
	Name, Type string
	Query      json.RawMessage
	Datasource *dsRef
	IncludeAll bool
	AllValue   string
	Multi      bool
}

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	Panels []struct {
		Title      string
		Datasource *dsRef
		Targets    []struct {
			Expr       string
			Datasource *dsRef
		}
	}
	Annotations struct {
		List []struct {
			Name       string
			Datasource *dsRef
		}
	}
	Templating struct{ List []variable }
}

var (
	// rawMetric matches a series name the API exports (not a recording rule's, which has a
	// colon), where a query selects it.
	rawMetric = regexp.MustCompile(`\b(seckill_[a-z0-9_]+|go_sql_[a-z_]+|up)\b(\{[^}]*\})?`)
	// productMetrics carry a product_id label.
	productMetrics = regexp.MustCompile(`\bseckill_(product_stock|queue_backlog|queue_dead_letters)\b`)
	usedVariable   = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	instanceFilter = `instance=~"$instance"`
	productFilter  = `product_id=~"$product_id"`
)

// checkDashboard returns what is wrong with a dashboard's text.
func checkDashboard(text []byte) []error {
	var d dashboard
	if err := json.Unmarshal(text, &d); err != nil {
		return []error{err}
	}
	var errs []error
	ds := func(where string, r *dsRef) {
		if r == nil || *r != dashboardDS {
			errs = append(errs, fmt.Errorf("%s: data source %+v, want %+v", where, r, dashboardDS))
		}
	}
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
		if v.Type == "query" {
			ds("variable "+v.Name, v.Datasource)
		}
	}
	if v := vars["datasource"]; v.Type != "datasource" || string(v.Query) != `"prometheus"` {
		errs = append(errs, fmt.Errorf("no variable datasource of type datasource querying prometheus (got %+v)", v))
	}
	for _, label := range []string{"instance", "product_id"} {
		v := vars[label]
		if v.Type != "query" || !strings.Contains(string(v.Query), `job=\"`+apiJob+`\"}, `+label+`)`) || !v.Multi || !v.IncludeAll || v.AllValue != ".*" {
			errs = append(errs, fmt.Errorf("variable %s: %+v, want a query of label_values(...{job=%q}, %s), multi-valued, with All as .*", label, v, apiJob, label))
		}
	}
	for _, a := range d.Annotations.List {
		ds("annotation "+a.Name, a.Datasource)
	}
	for _, p := range d.Panels {
		ds("panel "+p.Title, p.Datasource)
		for _, t := range p.Targets {
			ds("panel "+p.Title+": query "+t.Expr, t.Datasource)
			for _, m := range rawMetric.FindAllStringSubmatch(t.Expr, -1) {
				if !strings.Contains(m[2], instanceFilter) {
					errs = append(errs, fmt.Errorf("panel %s: %s does not follow the instance variable (%s)", p.Title, m[0], instanceFilter))
				}
				if productMetrics.MatchString(m[1]) && !strings.Contains(m[2], productFilter) {
					errs = append(errs, fmt.Errorf("panel %s: %s does not follow the product variable (%s)", p.Title, m[0], productFilter))
				}
			}
		}
	}
	for _, m := range usedVariable.FindAllStringSubmatch(string(text), -1) {
		if _, ok := vars[m[1]]; !ok && !strings.HasPrefix(m[1], "__") {
			errs = append(errs, fmt.Errorf("variable %s is used and not defined", m[1]))
		}
	}
	return append(errs, fixedUIDs(text)...)
}

// fixedUIDs reports every "uid" below the dashboard's own that is not its datasource variable.
func fixedUIDs(text []byte) []error {
	var doc map[string]any
	if err := json.Unmarshal(text, &doc); err != nil {
		return []error{err}
	}
	var errs []error
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "uid" && path != "" && x != dashboardDS.UID {
					errs = append(errs, fmt.Errorf("%s: a fixed uid %v", path, x))
				}
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", path, i), x)
			}
		}
	}
	walk("", doc)
	return errs
}

func dashboardFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "grafana", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboard in deploy/grafana/dashboards (%v)", err)
	}
	return files
}

// TestGrafanaDashboard: each dashboard names its data source by a datasource variable, never
// a fixed uid, has the variables instance and product_id, and every query of a series the
// API exports follows them.
func TestGrafanaDashboard(t *testing.T) {
	for _, file := range dashboardFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range checkDashboard(text) {
			t.Errorf("%s: %v", filepath.Base(file), err)
		}
	}
}

// TestGrafanaDashboardControls: a mutated copy of the dashboard per rule, which the check
// must reject.
func TestGrafanaDashboardControls(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "grafana", "dashboards", "seckill-sale.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"a fixed uid", `"uid": "${datasource}"`, `"uid": "prometheus"`, "a fixed uid prometheus"},
		{"no datasource variable", `"name": "datasource"`, `"name": "ds"`, "no variable datasource"},
		{"a query of all instances", `seckill_lock_lost_total{instance=~\"$instance\"}`, `seckill_lock_lost_total`, "seckill_lock_lost_total does not follow the instance variable"},
		{"stock of all products", `seckill_product_stock{instance=~\"$instance\", product_id=~\"$product_id\"}`, `seckill_product_stock{instance=~\"$instance\"}`, "does not follow the product variable"},
		{"All as the values listed", `"allValue": ".*"`, `"allValue": ""`, "variable instance"},
		{"an undefined variable", `instance=~\"$instance\"`, `instance=~\"$node\"`, "variable node is used and not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.ReplaceAll(string(text), tc.old, tc.new)
			if changed == string(text) {
				t.Fatalf("the dashboard does not hold %q: the control changes nothing", tc.old)
			}
			var msgs []string
			for _, err := range checkDashboard([]byte(changed)) {
				msgs = append(msgs, err.Error())
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tc.want) }) {
				t.Fatalf("check on the mutated copy: got %q, want an error containing %q", msgs, tc.want)
			}
		})
	}
}
