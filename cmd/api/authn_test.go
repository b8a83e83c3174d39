package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/testenv"
)

// TestAuthnConfig: the AUTH_* settings that cannot work are refused at start, naming the
// setting; the negative control (a complete set) parses.
func TestAuthnConfig(t *testing.T) {
	full := map[string]string{"AUTH_JWKS_FILE": "/k.json", "AUTH_AUDIENCE": "seckill", "AUTH_ISSUER": "https://id"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for key, val := range full {
			m[key] = val
		}
		if v == "-" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{with("AUTH_AUDIENCE", "-"), "AUTH_JWKS_FILE needs AUTH_AUDIENCE and AUTH_ISSUER"},
		{with("AUTH_ISSUER", "-"), "AUTH_JWKS_FILE needs AUTH_AUDIENCE and AUTH_ISSUER"},
		{with("AUTH_JWKS_FILE", "-"), "need AUTH_JWKS_FILE"},
		{with("AUTH_CLOCK_SKEW", "10m"), "AUTH_CLOCK_SKEW 10m0s"},
		{with("AUTH_CLOCK_SKEW", "-1s"), "AUTH_CLOCK_SKEW -1s"},
		{with("AUTH_RELOAD", "1ms"), "AUTH_RELOAD 1ms"},
		{with("AUTH_CACHE", "-5"), "AUTH_CACHE -5"},
	} {
		_, err := parseEnv(c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.env, err, c.want)
		}
	}
	cfg := mustParseEnv(t, full)
	if cfg.authn.clockSkew != 30*time.Second || cfg.authn.cache != authn.DefaultCacheSize || cfg.authn.reload != 5*time.Second {
		t.Errorf("defaults: %+v", cfg.authn)
	}
	if cfg := mustParseEnv(t, map[string]string{}); cfg.authn.jwksFile != "" {
		t.Errorf("buyer identity on by default: %+v", cfg.authn)
	}
}

// TestAuthnBadKeyFileStopsStart: a JWKS file that is missing or holds a private key stops
// the start, naming AUTH_JWKS_FILE.
func TestAuthnBadKeyFileStopsStart(t *testing.T) {
	priv, _, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir() + "/private.json"
	_ = os.WriteFile(bad, priv, 0o600)
	for _, file := range []string{t.TempDir() + "/missing.json", bad} {
		env := map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
			"AUTH_JWKS_FILE": file, "AUTH_AUDIENCE": "a", "AUTH_ISSUER": "i", "HTTP_ADDR": testenv.FreeAddr(t)}
		err := run(t.Context(), []string{"api"}, lookup(env), &testenv.Buffer{}, &testenv.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "AUTH_JWKS_FILE") {
			t.Errorf("%s: run = %v, want an AUTH_JWKS_FILE error", file, err)
		}
	}
}

// TestAuthnRotation: an API started with buyer identity on takes a key added to its JWKS file
// and drops a key removed, without a restart; tokens are never logged.
func TestAuthnRotation(t *testing.T) {
	t.Parallel()
	privA, pubA, _ := authn.GenerateKey(authn.AlgEdDSA)
	privB, pubB, _ := authn.GenerateKey(authn.AlgRS256)
	file := t.TempDir() + "/jwks.json"
	write := func(keys ...json.RawMessage) {
		if err := os.WriteFile(file+".new", authn.JWKS(keys...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".new", file); err != nil {
			t.Fatal(err)
		}
	}
	write(pubA)
	token := testenv.Name("admin-token-")
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"ADMIN_TOKEN": token, "AUTH_JWKS_FILE": file, "AUTH_AUDIENCE": "seckill", "AUTH_ISSUER": "https://id.test",
		"AUTH_RELOAD": "100ms", "LOG_LEVEL": "debug"})
	id := createProduct(t, api.base, token)
	sign := func(priv []byte, user int64) string {
		s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: "seckill", Issuer: "https://id.test"})
		if err != nil {
			t.Fatal(err)
		}
		tok, _, err := s.Token(user)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tokA, tokB := sign(privA, 1), sign(privB, 2)
	lookupAs := func(tok string, user int64) int {
		status, _ := do(t, "GET", fmt.Sprintf("%s/api/v1/products/%d/orders/%d", api.base, id, user), tok, "r", "")
		return status
	}
	if a, b := lookupAs(tokA, 1), lookupAs(tokB, 2); a != 404 || b != 401 {
		t.Fatalf("key A only: A %d, B %d; want 404 (no order yet) and 401", a, b)
	}
	write(pubA, pubB)
	testenv.Eventually(t, 10*time.Second, "key B accepted", func() bool { return lookupAs(tokB, 2) == 404 })
	if status, body := do(t, "POST", fmt.Sprintf("%s/api/v1/products/%d/purchase", api.base, id), tokB, "r", `{}`); status != 201 ||
		!strings.Contains(body, `"user_id":2`) {
		t.Fatalf("B buys: %d %s", status, body)
	}
	write(pubB)
	testenv.Eventually(t, 10*time.Second, "key A refused", func() bool { return lookupAs(tokA, 1) == 401 })
	if lookupAs(tokB, 2) != 200 {
		t.Fatal("B's order not found after A's removal")
	}
	logs := api.stop()
	if !strings.Contains(logs, "buyer token refused") || !strings.Contains(logs, "buyer identity on") {
		t.Fatalf("the log misses the events, so the test proves nothing:\n%s", logs)
	}
	for _, tok := range []string{tokA, tokB, tokA[strings.LastIndex(tokA, ".")+1:]} {
		if strings.Contains(logs, tok) {
			t.Errorf("the log holds a token:\n%s", logs)
		}
	}
}
