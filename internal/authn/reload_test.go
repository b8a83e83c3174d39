package authn_test

import (
	"os"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/testenv"
)

// TestRotation: with Run rereading the file, a key added is accepted and a key removed is
// refused, without a new Verifier; a file that breaks keeps the keys in use. The cache is on:
// a token it remembers is refused once its key is gone.
func TestRotation(t *testing.T) {
	ctx := t.Context()
	file := t.TempDir() + "/jwks.json"
	privA, pubA := keyFile(t, authn.AlgEdDSA)
	privB, pubB := keyFile(t, authn.AlgES256)
	writeJWKS(t, file, pubA)
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: aud, Issuer: iss, Reload: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go v.Run(ctx)
	a, _, _ := signer(t, privA, nil).Token(1)
	b, _, _ := signer(t, privB, nil).Token(2)
	accepted := func(tok string) bool { _, err := v.Verify(tok); return err == nil }
	if !accepted(a) || accepted(b) {
		t.Fatalf("before the rotation: A %v, B %v; want A only", accepted(a), accepted(b))
	}
	writeJWKS(t, file, pubA, pubB) // B added
	testenv.Eventually(t, 5*time.Second, "the new key B accepted", func() bool { return accepted(b) })
	if !accepted(a) {
		t.Fatal("A refused while both keys are in the file")
	}
	writeJWKS(t, file, pubB) // A removed
	testenv.Eventually(t, 5*time.Second, "the old key A refused", func() bool { return !accepted(a) })
	if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // five rereads of the broken file
	if !accepted(b) || accepted(a) {
		t.Fatalf("after a broken file: A %v, B %v; want B only, as before", accepted(a), accepted(b))
	}
}

// TestCacheNeverPastExp: a remembered token is accepted until its exp and not one instant
// after (the cache allows no skew), and the cache holds at most its size.
func TestCacheNeverPastExp(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	file := t.TempDir() + "/jwks.json"
	priv, pub := keyFile(t, authn.AlgEdDSA)
	writeJWKS(t, file, pub)
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: aud, Issuer: iss, Now: clk.now, CacheSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	s := signer(t, priv, clk.now)
	tok := mint(t, s, jwt.RegisteredClaims{Subject: "9", Audience: jwt.ClaimStrings{aud}, Issuer: iss,
		ExpiresAt: jwt.NewNumericDate(t0.Add(10 * time.Second))})
	for range 2 { // the first verifies and remembers it, the second finds it
		if _, err := v.Verify(tok); err != nil {
			t.Fatal(err)
		}
	}
	if got := authn.CacheLen(v); got != 1 {
		t.Fatalf("cache holds %d tokens, want 1", got)
	}
	clk.add(10*time.Second - time.Nanosecond)
	if _, err := v.Verify(tok); err != nil {
		t.Fatalf("1 ns before exp: %v", err)
	}
	clk.add(time.Nanosecond)
	if _, err := v.Verify(tok); err == nil {
		t.Fatal("at exp: accepted")
	}
	for i := range 1000 {
		_, _ = v.Verify(mint(t, s, jwt.RegisteredClaims{Subject: "9", Audience: jwt.ClaimStrings{aud}, Issuer: iss,
			ExpiresAt: jwt.NewNumericDate(t0.Add(time.Hour + time.Duration(i)*time.Second))}))
	}
	if got := authn.CacheLen(v); got > 32 {
		t.Fatalf("cache holds %d tokens, bound 32", got)
	}
}
