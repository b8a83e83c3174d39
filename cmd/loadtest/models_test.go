package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
)

// TestLoadModelsOnTheCommandLine: with neither -workers nor -stages a run is open at the
// default rate; -stages is open along its ramps (as many arrivals as their integral); -workers
// alone is closed; -model closed -rate paces the pool. The text and JSON reports say which
// model ran and give the corrected latency beside the raw one.
func TestLoadModelsOnTheCommandLine(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		name      string
		args      []string
		model     string
		rate      int
		scheduled int64 // 0: not checked
	}{
		{"default", nil, loadgen.ModelOpen, loadgen.DefaultRate, 150},
		{"stages", []string{"-stages=0s:0,1s:400", "-requests=100000"}, loadgen.ModelOpen, loadgen.DefaultRate, 200},
		{"workers", []string{"-workers=4"}, loadgen.ModelClosed, 0, 0},
		{"wrk2", []string{"-model=closed", "-workers=4", "-rate=500"}, loadgen.ModelClosed, 500, 0},
	} {
		jsonPath := filepath.Join(dir, tt.name+".json")
		args := append([]string{"run", "-strategy=dlock", "-stock=10", "-requests=150", "-repeat-share=0", "-json=" + jsonPath}, tt.args...)
		out, errOut, err := runFake(t, base, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", tt.name, err, out, errOut)
		}
		if !strings.Contains(out, "model         "+tt.model) || !strings.Contains(out, "corrected     mean") {
			t.Errorf("%s: stdout lacks the model %s or the corrected latency:\n%s", tt.name, tt.model, out)
		}
		rep := readReport(t, jsonPath)
		st := rep.Rounds[0][0].Stats
		if rep.Scenario.Model != tt.model || st.Model != tt.model || rep.Scenario.Rate != tt.rate || st.Correction == "" ||
			st.Histograms.Raw == "" || st.LatencyCorrected.P99 < st.Latency.P99 {
			t.Errorf("%s: scenario %s at %d/s, stats %s (%q), corrected p99 %v, raw %v; want %s at %d/s",
				tt.name, rep.Scenario.Model, rep.Scenario.Rate, st.Model, st.Correction, st.LatencyCorrected.P99, st.Latency.P99, tt.model, tt.rate)
		}
		if s := st.Arrivals.Scheduled; tt.scheduled > 0 && (s < tt.scheduled-1 || s > tt.scheduled+1 || st.Arrivals.Sent != st.Requests) {
			t.Errorf("%s: arrivals %+v, %d requests; want %d scheduled, all sent", tt.name, st.Arrivals, st.Requests, tt.scheduled)
		}
	}
}

// TestHistCSVAndMerge: -hist and -csv write their files; loadtest merge combines two reports
// into one whose counts are the sum and whose histogram holds every request.
func TestHistCSVAndMerge(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, m := range []string{"a", "b"} {
		out, errOut, err := runFake(t, base, "run", "-strategy=redis", "-stock=5", "-requests=100", "-rate=2000",
			"-json="+p(m+".json"), "-hist="+p(m+".hgrm"), "-csv="+p(m+".csv"))
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, errOut)
		}
	}
	hgrm, err := os.ReadFile(p("a.hgrm"))
	if err != nil || !strings.Contains(string(hgrm), "Value\tPercentile\tTotalCount\t1/(1-Percentile)") ||
		!strings.Contains(string(hgrm), "Total count    =          100") {
		t.Errorf("a.hgrm (%v):\n%s", err, hgrm)
	}
	f, err := os.Open(p("a.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "attack" || recs[1][0] != "redis" {
		t.Errorf("a.csv (%v): %v", err, recs)
	}

	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"loadtest", "merge", "-o=" + p("m.json"), "-hist=" + p("m.hgrm"), p("a.json"), p("b.json")},
		func(string) string { return "" }, &stdout, &stderr)
	out, errOut := stdout.String(), stderr.String()
	if err != nil {
		t.Fatalf("merge: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "merge of ") || !strings.Contains(out, "requests      200 in") {
		t.Errorf("merge stdout:\n%s", out)
	}
	st := readReport(t, p("m.json")).Rounds[0][0].Stats
	if st.Requests != 200 || st.Outcomes[loadgen.Bought] != 10 {
		t.Errorf("merged %d requests, outcomes %v; want 200, 10 bought", st.Requests, st.Outcomes)
	}
	if b, err := os.ReadFile(p("m.hgrm")); err != nil || !strings.Contains(string(b), "Total count    =          200") {
		t.Errorf("m.hgrm (%v):\n%s", err, b)
	}
}
