package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
)

// runMain runs this test binary as the program itself (TestMain, LOADTEST_AS_MAIN), in a
// process of its own, against base with the direct audits off; it returns stdout, stderr and
// the exit status.
func runMain(t *testing.T, base string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	argv := append(args, "-targets="+base, "-database-url=", "-redis-addr=", "-progress=0", "-duration=30s")
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), "LOADTEST_AS_MAIN=1", "ADMIN_TOKEN=secret")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("loadtest %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// failingAPI serves the fake API through a proxy that answers every tenth purchase 500, and
// of the others every seventh 503 busy and every eleventh 429: answers, not errors.
func failingAPI(t *testing.T) string {
	t.Helper()
	_, base := fakeapi.New(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	var purchases atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/purchase") {
			proxy.ServeHTTP(w, r)
			return
		}
		switch n := purchases.Add(1); {
		case n%10 == 0:
			http.Error(w, "injected", http.StatusInternalServerError)
		case n%7 == 0:
			problem(w, api.CodeBusy)
		case n%11 == 0:
			problem(w, api.CodeRateLimited)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestThresholdExitCode: a breached threshold exits 4 once the whole report is printed and
// written, a met one 0; errors are 5xx and transport errors, not 409 or 503 busy; an audit
// that failed exits 3 whatever the thresholds say. Each threshold is its own flag.
func TestThresholdExitCode(t *testing.T) {
	t.Parallel()
	_, fake := fakeapi.New(t)
	const failing = "a failingAPI of the subtest's own" // its count of purchases is the subtest's
	naive, naiveBase := fakeapi.New(t)
	naive.SetOversells("dlock", true) // a safe strategy that oversells: the audit fails
	scenario := []string{"run", "-strategy=dlock", "-stock=20", "-requests=300", "-workers=4", "-repeat-share=0.2"}
	tests := []struct {
		name, base string
		flags      []string
		want       int
		breached   []string // thresholds that must fail, by their text
	}{
		{"all met", fake, []string{"-max-p99=10s", "-max-error-rate=0", "-min-orders-per-sec=1"}, exitOK, nil},
		{"p99 breached", fake, []string{"-max-p99=1ns", "-max-error-rate=0"}, exitThreshold, []string{"FAIL dlock: p99"}},
		{"orders/s breached", fake, []string{"-min-orders-per-sec=1e12"}, exitThreshold, []string{"FAIL dlock: orders/s"}},
		{"5xx breach", failing, []string{"-max-error-rate=0"}, exitThreshold, []string{"FAIL dlock: error rate 10% (30 of 300 requests; limit 0%)"}},
		{"5xx under the limit", failing, []string{"-max-error-rate=15%"}, exitOK, nil},
		{"audit failure wins", naiveBase, []string{"-max-p99=1ns"}, exitAuditFailed, []string{"FAIL dlock: p99"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := tt.base
			if base == failing {
				base = failingAPI(t)
			}
			jsonPath := filepath.Join(t.TempDir(), "r.json")
			out, errOut, code := runMain(t, base, append(append(scenario, tt.flags...), "-json="+jsonPath)...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, out, errOut)
			}
			// The report comes first, whole, then the thresholds.
			verdictAt, thresholdsAt := strings.Index(out, "verdict "), strings.Index(out, "thresholds ")
			if verdictAt < 0 || thresholdsAt < verdictAt || !strings.Contains(out, "audit source  api (no -database-url or DATABASE_URL)") {
				t.Fatalf("stdout lacks the report, then the audit source and thresholds:\n%s", out)
			}
			for _, b := range tt.breached {
				if !strings.Contains(out, b) {
					t.Errorf("stdout lacks %q:\n%s", b, out)
				}
			}
			if tt.want == exitOK && strings.Contains(out, "FAIL") {
				t.Errorf("a threshold failed:\n%s", out)
			}
			rep := readReport(t, jsonPath)
			if len(rep.Thresholds) != len(tt.flags) {
				t.Fatalf("JSON thresholds %+v, want %d", rep.Thresholds, len(tt.flags))
			}
			var failed []string
			for _, r := range rep.Thresholds {
				if r.Row != "dlock" || r.Measured < 0 {
					t.Errorf("JSON threshold %+v", r)
				}
				if !r.Pass {
					failed = append(failed, "FAIL "+r.String())
				}
			}
			if len(failed) != len(tt.breached) {
				t.Errorf("JSON: breached %q, want %q", failed, tt.breached)
			}
			for i := range min(len(failed), len(tt.breached)) {
				if !strings.HasPrefix(failed[i], tt.breached[i]) {
					t.Errorf("JSON: breached %q, want %q", failed[i], tt.breached[i])
				}
			}
			for _, f := range rep.Flags { // recorded as set: -max-error-rate=15% as 0.15
				if f == "-max-error-rate=" || f == "-max-error-rate=15%" {
					t.Errorf("JSON flags %q: %q", rep.Flags, f)
				}
			}
			if rep.AuditSource.Ran != "api" || rep.AuditSource.CannotProve == "" {
				t.Errorf("JSON audit source %+v", rep.AuditSource)
			}
		})
	}
}

// TestTimeoutBelowMaxP99: a request -timeout cuts counts at the timeout, so a -max-p99 above
// it could pass a service that never answers: the command line refuses it (exit 2), before any
// request; -timeout equal to -max-p99 is accepted.
func TestTimeoutBelowMaxP99(t *testing.T) {
	t.Parallel()
	_, fake := fakeapi.New(t)
	scenario := []string{"run", "-strategy=dlock", "-stock=5", "-requests=50", "-workers=2"}
	out, errOut, code := runMain(t, fake, append(scenario, "-timeout=1s", "-max-p99=3s")...)
	if code != exitUsage || !strings.Contains(errOut, "-timeout 1s is below -max-p99 3s") || strings.Contains(out, "requests ") {
		t.Fatalf("-timeout 1s -max-p99 3s: exit %d, want %d and the reason, before any request\nstdout:\n%s\nstderr:\n%s", code, exitUsage, out, errOut)
	}
	if out, errOut, code := runMain(t, fake, append(scenario, "-timeout=3s", "-max-p99=3s")...); code != exitOK {
		t.Fatalf("-timeout 3s -max-p99 3s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, out, errOut)
	}
}

func problem(w http.ResponseWriter, code string) {
	p := api.NewProblem(code, "")
	w.Header().Set("Content-Type", api.ContentTypeProblem)
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}
