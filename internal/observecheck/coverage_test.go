package observecheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEveryAlertTested: each alert of the rules has a promtool test (rules/*_test.yml) in
// which it fires and one in which it is expected silent.
func TestEveryAlertTested(t *testing.T) {
	t.Parallel()
	var alerts []string
	for _, file := range glob(t, filepath.Join(deploy, "prometheus/rules/*.rules.yml")) {
		var rf struct {
			Groups []struct {
				Rules []struct{ Alert string }
			}
		}
		readYAML(t, file, &rf)
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					alerts = append(alerts, r.Alert)
				}
			}
		}
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, file := range glob(t, filepath.Join(deploy, "prometheus/rules/*_test.yml")) {
		var tf struct {
			Tests []struct {
				AlertRuleTest []struct {
					Alertname string
					ExpAlerts []any `json:"exp_alerts"`
				} `json:"alert_rule_test"`
			}
		}
		readYAML(t, file, &tf)
		for _, tc := range tf.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					silent[a.Alertname] = true
				}
			}
		}
	}
	if len(alerts) < 20 {
		t.Fatalf("only %d alerts read: %v", len(alerts), alerts)
	}
	for _, a := range alerts {
		if !fires[a] {
			t.Errorf("alert %s: no promtool test in which it fires", a)
		}
		if !silent[a] {
			t.Errorf("alert %s: no promtool test in which it is silent", a)
		}
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// TestRunbooksExist: each alert's runbook annotation names a section of
// docs/running-a-sale.md (a heading, as GitHub makes its anchor).
func TestRunbooksExist(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(deploy, "../docs/running-a-sale.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.ToLower(strings.TrimSpace(strings.TrimLeft(h, "#")))
			anchors[strings.ReplaceAll(h, " ", "-")] = true
		}
	}
	var rf struct {
		Groups []struct {
			Rules []struct {
				Alert       string
				Annotations map[string]string
			}
		}
	}
	readYAML(t, filepath.Join(deploy, "prometheus/rules/seckill.rules.yml"), &rf)
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			book, ok := strings.CutPrefix(r.Annotations["runbook"], "docs/running-a-sale.md#")
			if !ok || !anchors[book] {
				t.Errorf("alert %s: runbook %q is not a section of docs/running-a-sale.md", r.Alert, r.Annotations["runbook"])
			}
		}
	}
	if n == 0 {
		t.Fatal("no alert read")
	}
}
