package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// falseOrder is the order id the lying front's false 201 names: none PostgreSQL has.
const falseOrder = 999_999_999

// liar is a front to a real API that, while on, lies twice per product: the first purchase
// the API answered 201 it answers 503 busy (the order stays in PostgreSQL, hidden), and the
// first the API answered 409 sold_out it answers 201 naming falseOrder. The counts of 201s
// and orders still agree.
type liar struct {
	api   *url.URL
	proxy *httputil.ReverseProxy
	on    atomic.Bool
	mu    sync.Mutex
	hid   map[string]int64 // product -> the buyer whose order it hid
	faked map[string]int64 // product -> the buyer it answered a false 201
}

func newLiar(t *testing.T, base string) (*liar, string) {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	l := &liar{api: u, proxy: httputil.NewSingleHostReverseProxy(u), hid: map[string]int64{}, faked: map[string]int64{}}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, srv.URL
}

func (l *liar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	product, ok := strings.CutPrefix(r.URL.Path, "/api/v1/products/")
	product, ok2 := strings.CutSuffix(product, "/purchase")
	if r.Method != http.MethodPost || !ok || !ok2 || !l.on.Load() {
		l.proxy.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, l.api.JoinPath(r.URL.Path).String(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var buyer api.Purchase
	_ = json.Unmarshal(body, &buyer)
	var p api.Problem
	_ = json.Unmarshal(answer, &p)
	l.mu.Lock()
	_, hidden := l.hid[product]
	_, faked := l.faked[product]
	switch {
	case resp.StatusCode == http.StatusCreated && !hidden:
		l.hid[product] = buyer.UserID
		l.mu.Unlock()
		w.Header().Set("Content-Type", api.ContentTypeProblem)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(api.NewProblem(api.CodeBusy, ""))
	case resp.StatusCode == http.StatusConflict && p.Code == api.CodeSoldOut && !faked:
		l.faked[product] = buyer.UserID
		l.mu.Unlock()
		id := 0
		fmt.Sscan(product, &id)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", fmt.Sprintf("/api/v1/products/%s/orders/%d", product, buyer.UserID))
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(api.Order{ID: falseOrder, ProductID: int64(id), UserID: buyer.UserID,
			CreatedAt: time.Now(), Status: api.StatusPaid})
	default:
		l.mu.Unlock()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}
}

// lies returns the buyers lied to about product: the one whose order was hidden, the one
// answered a false 201.
func (l *liar) lies(product int64) (hid, faked int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := fmt.Sprint(product)
	return l.hid[key], l.faked[key]
}

// TestVerdictPerBuyer runs `loadtest run` against a real API process through a front that
// hides one buyer's order behind a 503 busy and answers another buyer sold_out as a 201
// naming an order PostgreSQL does not have: as many 201s as orders. Reading PostgreSQL, the
// verdict fails, naming both buyers; so does -check's history. Through the same front
// telling the truth, the run passes; with the API's audit alone (-audit api), which counts,
// the lie passes, as the audit source says it may.
func TestVerdictPerBuyer(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	const token = "verdict-per-buyer-admin-token"
	a := servers.StartAPI(t, "api", map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "5", "RATE_LIMIT_USER": "off"})
	l, front := newLiar(t, a.Base)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	loadtest := func(args ...string) (string, int, loadgen.RunReport) {
		t.Helper()
		jsonPath := filepath.Join(t.TempDir(), "r.json")
		argv := append([]string{"loadtest", "run", "-targets=" + front, "-strategy=dlock", "-stock=10", "-requests=200",
			"-workers=8", "-progress=0", "-duration=30s", "-json=" + jsonPath, "-database-url=" + dsn, "-redis-addr=" + redisAddr,
			"-redis-prefix=" + prefix}, args...)
		var out, errb bytes.Buffer
		err := run(ctx, argv, func(k string) string { return map[string]string{"ADMIN_TOKEN": token}[k] }, &out, &errb)
		code := exitCode(err)
		if code != exitOK && code != exitAuditFailed {
			t.Fatalf("%v: exit %d (%v)\nstdout:\n%s\nstderr:\n%s", args, code, err, out.String(), errb.String())
		}
		return out.String(), code, readReport(t, jsonPath).Rounds[0][0]
	}

	out, code, r := loadtest("-check")
	if code != exitOK || !r.Verdict.OK || r.Audit.Buyers == nil || r.Audit.Buyers.Untrue != 0 || r.History == nil || !r.History.Linearizable {
		t.Fatalf("the front telling the truth: exit %d, verdict %+v, buyers %+v, history %+v\n%s", code, r.Verdict, r.Audit.Buyers, r.History, out)
	}
	if !strings.Contains(out, "audit buyers  ") || !strings.Contains(out, "every answer agrees with PostgreSQL, buyer by buyer") {
		t.Errorf("the report does not say the answers were checked buyer by buyer:\n%s", out)
	}

	l.on.Store(true)
	out, code, r = loadtest()
	hid, faked := l.lies(r.ProductID)
	if hid == 0 || faked == 0 {
		t.Fatalf("the front lied to %d and %d: want a hidden order and a false 201\n%s", hid, faked, out)
	}
	if got, want := r.Stats.Outcomes[loadgen.Bought], int64(10); got != want || r.Audit.Direct == nil || r.Audit.Direct.Orders != 10 {
		t.Fatalf("bought %d (want %d) and the direct audit %+v: the counts must agree for the control to mean anything", got, want, r.Audit.Direct)
	}
	problems := strings.Join(r.Verdict.Problems, "\n")
	for _, want := range []string{
		fmt.Sprintf("answers against PostgreSQL: user %d was answered 201 (order %d) but has no order in PostgreSQL", faked, falseOrder),
		fmt.Sprintf("answers against PostgreSQL: user %d has order ", hid),
		"but every answer of theirs said nothing was written (", // busy ×1, and already_purchased for a repeat buyer
		"busy ×1",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("the verdict's problems lack %q:\n%s", want, problems)
		}
	}
	if code != exitAuditFailed || r.Verdict.OK || r.Audit.Buyers == nil || r.Audit.Buyers.Untrue != 2 {
		t.Errorf("lying front: exit %d, verdict %+v, buyers %+v; want exit %d, 2 buyers' answers untrue", code, r.Verdict, r.Audit.Buyers, exitAuditFailed)
	}
	t.Logf("lying front: %s\n%s", r.Audit.Buyers, problems)

	_, code, r = loadtest("-check")
	hid, faked = l.lies(r.ProductID)
	if h := r.History; code != exitAuditFailed || h == nil || h.Verdict != history.Illegal || len(h.Reasons) < 2 ||
		!strings.Contains(strings.Join(h.Reasons, "\n"), fmt.Sprintf("user %d was answered 201 order %d", faked, falseOrder)) ||
		!strings.Contains(strings.Join(h.Reasons, "\n"), fmt.Sprintf("user %d has order ", hid)) {
		t.Errorf("lying front, -check: exit %d, history %+v; want illegal, naming users %d and %d", code, h, faked, hid)
	} else {
		t.Logf("lying front, -check: %s: %q", h, h.Reasons)
	}

	out, code, r = loadtest("-audit=api")
	if code != exitOK || !r.Verdict.OK || r.Audit.Buyers != nil || !strings.Contains(r.Verdict.Label, "PASS") {
		t.Errorf("lying front, the API's audit alone: exit %d, verdict %+v; want a PASS, the counts agreeing\n%s", code, r.Verdict, out)
	}
}
