package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
)

// signedFront serves the fake API behind a front that checks each purchase's token against
// the key's JWKS and its body's user_id, and notes how many tokens mints() had counted when
// the first purchase arrived.
type signedFront struct {
	base     string
	atFirst  atomic.Int64 // mints() at the first purchase, -1 before it
	bad      atomic.Int64 // purchases whose token did not prove their body's user
	mu       sync.Mutex
	firstBad string
}

func newSignedFront(t *testing.T, pub []byte, mints func() int64) *signedFront {
	t.Helper()
	_, fake := fakeapi.New(t)
	u, _ := url.Parse(fake)
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, authn.JWKS(pub), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: "a", Issuer: "i", CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := &signedFront{}
	f.atFirst.Store(-1)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/purchase") {
			f.atFirst.CompareAndSwap(-1, mints())
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var p struct {
				UserID int64 `json:"user_id"`
			}
			_ = json.Unmarshal(body, &p)
			tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if user, err := v.Verify(tok); err != nil || user != p.UserID {
				f.bad.Add(1)
				f.mu.Lock()
				f.firstBad = string(body) + ": " + r.Header.Get("Authorization")
				f.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.base = srv.URL
	return f
}

// signedRun runs 300 sold-out purchases of 8 buyers at once through Execute with a token
// source whose signer counts its mints, and returns the mints in all, those after the first
// purchase, and the JSON report's late_tokens.
func signedRun(t *testing.T) (all, during, late int64, stderr string) {
	priv, pub, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	var mints atomic.Int64
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: "a", Issuer: "i",
		Now: func() time.Time { mints.Add(1); return time.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	front := newSignedFront(t, pub, mints.Load)
	cfg := DefaultConfig()
	cfg.Cmd, cfg.Targets, cfg.Strategies, cfg.StrategyFlag, cfg.AuditMode = "run", []string{front.base}, []string{"dlock"}, "-strategy", AuditAPI
	cfg.Stock, cfg.Rate, cfg.Workers, cfg.Requests, cfg.Duration, cfg.Progress, cfg.Seed = 0, 0, 8, 300, time.Minute, 0, 5
	cfg.AdminToken, cfg.Deploy.Tokens = "secret", NewTokens(s) // the fake's admin token
	cfg.JSONPath = filepath.Join(t.TempDir(), "run.json")
	if err := cfg.Complete(); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := Execute(context.Background(), cfg, nil, &out, &errOut); err != nil {
		t.Fatalf("Execute: %v\n%s", err, errOut.String())
	}
	if n := front.bad.Load(); n > 0 {
		t.Fatalf("%d purchases' tokens did not prove their user_id, such as %s", n, front.firstBad)
	}
	var rep struct {
		Rounds [][]struct {
			Buyers map[string]int64 `json:"buyers"`
		} `json:"rounds"`
	}
	b, _ := os.ReadFile(cfg.JSONPath)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return mints.Load(), mints.Load() - front.atFirst.Load(), rep.Rounds[0][0].Buyers["late_tokens"], errOut.String()
}

// TestAttackSendsPremintedTokens: with -sign-key, every buyer's token is minted before the
// attack (as many as the run's -requests), and none while it runs; each purchase carries the
// token of its body's buyer.
func TestAttackSendsPremintedTokens(t *testing.T) {
	all, during, late, stderr := signedRun(t)
	if all != 300 || during != 0 || late != 0 || !strings.Contains(stderr, "minted 300 buyers' tokens") {
		t.Fatalf("minted %d tokens, %d during the attack, late_tokens %d; want 300, all before it\n%s", all, during, late, stderr)
	}
}

// TestAttackReportsLateTokens: the negative control. With the pool bounded below the run's
// buyers, tokens are minted during the attack, and the report and stderr say how many.
func TestAttackReportsLateTokens(t *testing.T) {
	defer func(n int) { maxPremint = n }(maxPremint)
	maxPremint = 10
	all, during, late, stderr := signedRun(t)
	if during == 0 || late != during || all != 10+during || !strings.Contains(stderr, "minted during the attack") {
		t.Fatalf("minted %d tokens, %d during the attack, late_tokens %d; want 10 before it and the rest reported\n%s", all, during, late, stderr)
	}
}
