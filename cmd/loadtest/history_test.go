package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
)

// TestRunCheck runs -check against the fake API: a safe strategy's history is linearizable
// and the report says so, with the size and time of the check; naive's (the fake sells
// twice its stock) is illegal, its page written beside the JSON report, and the verdict is
// naive's, not a failure; a safe strategy that oversells fails on its history too.
func TestRunCheck(t *testing.T) {
	t.Parallel()
	f, base := fakeapi.New(t)
	for _, tt := range []struct {
		strategy string
		oversell bool
		want     history.Verdict
		label    string
	}{
		{"pessimistic", false, history.Linearizable, "PASS"},
		{"naive", true, history.Illegal, "OVERSOLD (expected)"},
		{"optimistic", true, history.Illegal, "FAIL"},
	} {
		f.SetOversells(tt.strategy, tt.oversell)
		dir := t.TempDir()
		jsonPath := filepath.Join(dir, "r.json")
		out, errOut, err := runFake(t, base, "run", "-strategy="+tt.strategy, "-stock=20", "-requests=300", "-workers=8",
			"-repeat-share=0.2", "-check", "-json="+jsonPath)
		t.Logf("%s:\n%s", tt.strategy, out)
		if (err != nil) != (tt.label == "FAIL") {
			t.Fatalf("%s: run: %v\nstdout:\n%s\nstderr:\n%s", tt.strategy, err, out, errOut)
		}
		h := readReport(t, jsonPath).Rounds[0][0].History
		if h == nil || h.Verdict != tt.want || h.Operations+h.Dropped == 0 || h.Resolved {
			t.Fatalf("%s: history %+v, want %s, unresolved (no -database-url)", tt.strategy, h, tt.want)
		}
		for _, want := range []string{"history       " + string(tt.want) + ": ", "verdict       " + tt.label} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: stdout lacks %q:\n%s", tt.strategy, want, out)
			}
		}
		if !strings.Contains(errOut, "history "+string(tt.want)) {
			t.Errorf("%s: stderr lacks the history's line:\n%s", tt.strategy, errOut)
		}
		if tt.want == history.Linearizable {
			continue
		}
		if len(h.Reasons) == 0 || !strings.Contains(h.Reasons[0], "took a unit") || filepath.Dir(h.Visualization) != dir {
			t.Errorf("%s: reasons %q, page %q: want the oversell, and the page beside the report", tt.strategy, h.Reasons, h.Visualization)
		}
		if page, err := os.ReadFile(h.Visualization); err != nil || !strings.Contains(string(page), "<html") {
			t.Errorf("%s: page %s: %v", tt.strategy, h.Visualization, err)
		}
		if tt.label == "FAIL" && !strings.Contains(out, "history illegal") {
			t.Errorf("%s: the verdict does not name the history:\n%s", tt.strategy, out)
		}
	}
}
