package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// runFake runs the program against the fake API with the direct audits off.
func runFake(t *testing.T, base string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	env := map[string]string{"ADMIN_TOKEN": "secret", "LOADTEST_TARGETS": base + "," + base}
	argv := append([]string{"loadtest"}, args...)
	// Every caller bounds its run with -requests; the duration only stops a run that hangs,
	// generous enough for a machine that runs the lab and the fault tests beside it.
	argv = append(argv, "-database-url=", "-redis-addr=", "-progress=0", "-duration=30s")
	var out, errb bytes.Buffer
	err = run(context.Background(), argv, func(k string) string { return env[k] }, &out, &errb)
	return out.String(), errb.String(), err
}

func TestRunWritesEveryReport(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	dir := t.TempDir()
	jsonPath, plotPath, resultsPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.bin")
	out, errOut, err := runFake(t, base, "run", "-strategy=pessimistic", "-stock=20", "-requests=300", "-workers=8",
		"-repeat-share=0.2", "-json="+jsonPath, "-plot="+plotPath, "-results="+resultsPath, "-admin-token=secret")
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, want := range []string{"strategy      pessimistic", "requests      300 in", "latency       mean",
		"bought 20", "already_purchased", "orders        20 in", "audit API     initial 20  stock 0  orders 20",
		"verdict       PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	rep := readReport(t, jsonPath)
	r := rep.Rounds[0][0]
	if !rep.OK || r.Stats.Requests != 300 || r.Stats.Outcomes[loadgen.Bought] != 20 || r.Buyers.Repeats == 0 {
		t.Errorf("json report: ok %v, %d requests, %v outcomes, %d repeats", rep.OK, r.Stats.Requests, r.Stats.Outcomes, r.Buyers.Repeats)
	}
	if got := strings.Join(rep.Flags, " "); !strings.Contains(got, "-strategy=pessimistic") ||
		!strings.Contains(got, "-admin-token=REDACTED") || strings.Contains(got, "secret") || strings.Contains(got, "-json") {
		t.Errorf("json report: flags %q, want the scenario's with the token redacted and no outputs", got)
	}
	if c := r.Stats.Outcomes; c[loadgen.Bought]+c[loadgen.SoldOut]+c[loadgen.AlreadyPurchased] != 300 {
		t.Errorf("outcomes %v do not add up to 300", c)
	}
	html, err := os.ReadFile(plotPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"pessimistic: bought", "pessimistic: sold_out"} {
		if !bytes.Contains(html, []byte(label)) {
			t.Errorf("plot lacks the series %q", label)
		}
	}
	f, err := os.Open(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var m vegeta.Metrics
	dec := vegeta.NewDecoder(f)
	for {
		var res vegeta.Result
		if dec.Decode(&res) != nil {
			break
		}
		m.Add(&res)
	}
	m.Close()
	if m.Requests != 300 {
		t.Errorf("results file holds %d results, want 300", m.Requests)
	}
}

func TestCompareShowsNaiveOversell(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	out, errOut, err := runFake(t, base, "compare", "-strategies=dlock,naive,redis", "-stock=10", "-requests=200",
		"-workers=4", "-after-soldout=300ms", "-repeat-share=0", "-requests=100000")
	if err != nil {
		t.Fatalf("compare: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, want := range []string{"OVERSOLD (expected)", "PASS: no safe strategy oversold", loadgen.SoldOutRowName, loadgen.GinBaselineName,
		"sold-out rejection: the API answers"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestRunQueueCountsAccepted: a queue product's 202 answers are their own outcome, accepted, in
// every report; they count with the 201s against the orders once the queue has drained (the
// fake writes one queued order per audit request, so the run has to wait for it).
func TestRunQueueCountsAccepted(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	jsonPath, plotPath := filepath.Join(t.TempDir(), "q.json"), filepath.Join(t.TempDir(), "q.html")
	out, errOut, err := runFake(t, base, "run", "-strategy=queue", "-stock=20", "-requests=200", "-workers=4",
		"-repeat-share=0", "-json="+jsonPath, "-plot="+plotPath)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, want := range []string{"bought 10 accepted 10", "orders        20 in", "audit API     initial 20  stock 0  orders 20",
		"redis queue: stock 0 (seeded yes)  buyers 20  queued 0  dead 0  agrees yes", "verdict       PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "bought 20 (accepted 10)") {
		t.Errorf("stderr lacks the admitted buyers:\n%s", errOut)
	}
	rep := readReport(t, jsonPath)
	if c := rep.Rounds[0][0].Stats.Outcomes; c[loadgen.Bought] != 10 || c[loadgen.Accepted] != 10 || c.Errors() != 0 {
		t.Errorf("json outcomes = %v, want 10 bought, 10 accepted, no error", c)
	}
	if s := rep.Summary[0]; s.Bought != 10 || s.Accepted != 10 || !s.OK {
		t.Errorf("summary = %+v", s)
	}
	if html, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(html, []byte("queue: accepted")) {
		t.Errorf("plot lacks the accepted series (%v)", err)
	}
}

func TestCompareFailsWhenASafeStrategyOversells(t *testing.T) {
	t.Parallel()
	f, base := fakeapi.New(t)
	f.SetOversells("optimistic", true)
	out, _, err := runFake(t, base, "compare", "-strategies=dlock,optimistic", "-stock=10", "-requests=100",
		"-workers=4", "-baseline=false", "-expect-naive-oversell=false")
	if !errors.Is(err, loadgen.ErrAuditFailed) || exitCode(err) != exitAuditFailed {
		t.Fatalf("compare = %v (exit %d), want an audit failure (exit 3)\n%s", err, exitCode(err), out)
	}
	if !strings.Contains(out, "FAIL: optimistic") || !strings.Contains(out, "API audit: oversold 10") {
		t.Errorf("table does not name the failure:\n%s", out)
	}
}

func TestCompareFailsWhenNaiveDoesNotOversell(t *testing.T) {
	t.Parallel()
	f, base := fakeapi.New(t)
	f.SetOversells("naive", false)
	out, _, err := runFake(t, base, "compare", "-strategies=naive", "-stock=10", "-requests=50", "-workers=2", "-baseline=false")
	if exitCode(err) != exitAuditFailed || !strings.Contains(out, "naive did not oversell") {
		t.Fatalf("compare = %v, want naive to fail for not overselling\n%s", err, out)
	}
	// Without the expectation, a naive run that happens not to oversell is fine.
	if _, _, err := runFake(t, base, "compare", "-strategies=naive", "-stock=10", "-requests=50", "-workers=2",
		"-baseline=false", "-expect-naive-oversell=false"); err != nil {
		t.Fatalf("compare without the expectation: %v", err)
	}
}

func TestCompareRunsMedians(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	jsonPath := filepath.Join(t.TempDir(), "c.json")
	out, _, err := runFake(t, base, "compare", "-strategies=dlock,pessimistic", "-stock=5", "-requests=60", "-workers=2",
		"-baseline=false", "-runs=3", "-json="+jsonPath, "-meta=cpu=test cpu", "-meta=go=go1.26")
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	if !strings.Contains(out, "medians of 3 runs") {
		t.Errorf("table does not say it shows medians:\n%s", out)
	}
	rep := readReport(t, jsonPath)
	if len(rep.Rounds) != 3 || len(rep.Summary) != 2 || rep.Summary[0].Runs != 3 || rep.Summary[0].Bought != 5 {
		t.Fatalf("report: %d rounds, summary %+v", len(rep.Rounds), rep.Summary)
	}
	if rep.Meta["cpu"] != "test cpu" || rep.Meta["go"] != "go1.26" {
		t.Errorf("meta = %v", rep.Meta)
	}
	// The metadata bench records take from the report.
	if rep.Build.Go == "" || rep.Build.Revision == "" || rep.Machine.Cores < 1 || rep.Machine.Host == "" {
		t.Errorf("build %+v, machine %+v", rep.Build, rep.Machine)
	}
	if runtime.GOOS == "linux" && (rep.CPU == nil || rep.CPU.Ticks <= 0 || rep.Machine.Kernel == "") {
		t.Errorf("on Linux: cpu %+v, kernel %q", rep.CPU, rep.Machine.Kernel)
	}
}

func TestRunHarnessErrors(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want int
	}{
		{"no command", nil, nil, exitUsage},
		{"unknown command", nil, []string{"attack"}, exitUsage},
		{"help", nil, []string{"run", "-h"}, exitOK},
		{"bad flags", map[string]string{"ADMIN_TOKEN": "secret"},
			[]string{"run", "-strategy=magic", "-repeat-share=1", "-duration=0s", "-targets=ftp://x"}, exitUsage},
		{"no admin token", nil, []string{"run", "-targets=" + base}, exitUsage},
		{"wrong admin token", map[string]string{"ADMIN_TOKEN": "wrong"},
			[]string{"run", "-targets=" + base, "-database-url=", "-redis-addr=", "-progress=0"}, exitHarness},
		{"API down", map[string]string{"ADMIN_TOKEN": "secret"},
			[]string{"run", "-targets=http://127.0.0.1:1", "-database-url=", "-redis-addr=", "-wait=300ms"}, exitHarness},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), append([]string{"loadtest"}, tt.args...),
				func(k string) string { return tt.env[k] }, &out, &errb)
			if got := exitCode(err); got != tt.want {
				t.Fatalf("exit %d (%v), want %d\nstderr:\n%s", got, err, tt.want, errb.String())
			}
		})
	}
}

func TestBadFlagsAreAllNamed(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"loadtest", "run", "-strategy=magic", "-repeat-share=1", "-duration=0s", "-workers=0", "-model=half-open"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if got := exitCode(err); got != exitUsage {
		t.Errorf("exit %d, want %d", got, exitUsage)
	}
	for _, want := range []string{"-strategy", "-repeat-share", "-duration", "-workers", "-model", "admin token"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

func TestBaselineCommand(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	// Paced, so that the rejections span enough time for a rate also on a fast machine.
	out, errOut, err := runFake(t, base, "baseline", "-requests=3000", "-rate=6000", "-workers=4")
	if err != nil {
		t.Fatalf("baseline: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{loadgen.SoldOutRowName, loadgen.GinBaselineName, "the API answers"} {
		if !strings.Contains(out, want) {
			t.Errorf("baseline table lacks %q:\n%s", want, out)
		}
	}
	// Two targets: two bare gin processes, each started from this test binary (see TestMain).
	if !strings.Contains(errOut, "[bare gin 409] 2 processes: 3000 requests") {
		t.Errorf("stderr does not report 2 bare gin processes and 3000 requests:\n%s", errOut)
	}
}

// readReport reads the JSON report a run wrote to path (-json).
func readReport(t *testing.T, path string) loadgen.Report {
	t.Helper()
	var rep loadgen.Report
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatalf("JSON report %s: %v", path, err)
	}
	return rep
}
