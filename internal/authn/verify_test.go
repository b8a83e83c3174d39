package authn_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seckill/seckill/internal/authn"
)

const (
	aud = "seckill"
	iss = "https://id.test"
)

// keyFile makes a key for alg and returns its private PEM and public JWK.
func keyFile(t *testing.T, alg string) (priv []byte, pub json.RawMessage) {
	t.Helper()
	priv, pub, err := authn.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

func writeJWKS(t testing.TB, file string, keys ...json.RawMessage) {
	t.Helper()
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, authn.JWKS(keys...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil { // as a ConfigMap or a careful operator swaps it
		t.Fatal(err)
	}
}

func signer(t *testing.T, priv []byte, now func() time.Time) *authn.Signer {
	t.Helper()
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: aud, Issuer: iss, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clock is a settable clock for the verifier.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock    { c := &clock{}; c.set(t); return c }
func mint(t *testing.T, s *authn.Signer, c jwt.RegisteredClaims) string {
	t.Helper()
	tok, _, err := s.Mint(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestVerify: each way a token can be wrong is refused with its reason, for each algorithm,
// and the negative controls (the same token made right, or within the clock skew) pass.
func TestVerify(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	dir := t.TempDir()
	for _, alg := range []string{authn.AlgEdDSA, authn.AlgES256, authn.AlgRS256} {
		t.Run(alg, func(t *testing.T) {
			priv, pub := keyFile(t, alg)
			otherPriv, _ := keyFile(t, alg)
			_, edPub := keyFile(t, authn.AlgEdDSA)
			writeJWKS(t, dir+"/jwks.json", pub, edPub)
			v, err := authn.New(authn.Config{JWKSFile: dir + "/jwks.json", Audience: aud, Issuer: iss,
				Leeway: 30 * time.Second, Now: clk.now, CacheSize: -1})
			if err != nil {
				t.Fatal(err)
			}
			s := signer(t, priv, clk.now)
			forger, err := authn.NewSigner(authn.SignerConfig{Key: otherPriv, Kid: s.Kid(), Audience: aud, Issuer: iss, Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			good := func() jwt.RegisteredClaims {
				return jwt.RegisteredClaims{Subject: "42", Audience: jwt.ClaimStrings{"other", aud}, Issuer: iss,
					ExpiresAt: jwt.NewNumericDate(t0.Add(time.Minute)), NotBefore: jwt.NewNumericDate(t0)}
			}
			with := func(f func(c *jwt.RegisteredClaims)) string { c := good(); f(&c); return mint(t, s, c) }
			for _, tc := range []struct {
				name, token, why string
			}{
				{"good", mint(t, s, good()), ""},
				{"expired", with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(t0.Add(-31 * time.Second)) }), "expired"},
				{"expired within the skew", with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(t0.Add(-29 * time.Second)) }), ""},
				{"not yet valid", with(func(c *jwt.RegisteredClaims) { c.NotBefore = jwt.NewNumericDate(t0.Add(31 * time.Second)) }), "not valid yet"},
				{"nbf within the skew", with(func(c *jwt.RegisteredClaims) { c.NotBefore = jwt.NewNumericDate(t0.Add(29 * time.Second)) }), ""},
				{"wrong audience", with(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"seckill-staging"} }), "another audience"},
				{"no audience", with(func(c *jwt.RegisteredClaims) { c.Audience = nil }), "required claim"},
				{"wrong issuer", with(func(c *jwt.RegisteredClaims) { c.Issuer = "https://evil.test" }), "another issuer"},
				{"no issuer", with(func(c *jwt.RegisteredClaims) { c.Issuer = "" }), "required claim"},
				{"no exp", with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil }), "required claim"},
				{"sub not a number", with(func(c *jwt.RegisteredClaims) { c.Subject = "alice" }), "sub is not a user id"},
				{"sub with a sign", with(func(c *jwt.RegisteredClaims) { c.Subject = "+42" }), "sub is not a user id"},
				{"sub zero", with(func(c *jwt.RegisteredClaims) { c.Subject = "0" }), "sub is not a user id"},
				{"forged: another key, same kid", mint(t, forger, good()), "bad signature"},
				{"alg none", unsigned(t, good(), s.Kid()), "alg not accepted"},
				{"HS256 keyed with the public key", hmacToken(t, good(), s.Kid(), pub), "alg not accepted"},
				{"another key's alg", wrongAlg(t, good(), alg, edPub), "alg does not match"},
				{"unknown kid", mintKid(t, priv, "nobody", good()), "unknown key"},
				{"malformed", "abc.def", "malformed"},
				{"too long", strings.Repeat("a", 5000), "longer than"},
			} {
				user, err := v.Verify(tc.token)
				switch {
				case tc.why == "" && (err != nil || user != 42):
					t.Errorf("%s: %d, %v; want 42", tc.name, user, err)
				case tc.why != "" && (!errors.Is(err, authn.ErrInvalidToken) || !strings.Contains(err.Error(), tc.why)):
					t.Errorf("%s: %d, %v; want ErrInvalidToken, %q", tc.name, user, err, tc.why)
				}
			}
		})
	}
}

func mintKid(t *testing.T, priv []byte, kid string, c jwt.RegisteredClaims) string {
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Kid: kid, Audience: aud, Issuer: iss})
	if err != nil {
		t.Fatal(err)
	}
	return mint(t, s, c)
}

// unsigned is the token with "alg": "none" and no signature.
func unsigned(t *testing.T, c jwt.RegisteredClaims, kid string) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hmacToken is the classic confusion attack: HS256 keyed with the verifier's public key.
func hmacToken(t *testing.T, c jwt.RegisteredClaims, kid string, pub json.RawMessage) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString([]byte(pub))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wrongAlg signs with a fresh key of another algorithm under the kid of edPub's key (or, for
// EdDSA, an ES256 key under that kid): the kid names a key of another kind.
func wrongAlg(t *testing.T, c jwt.RegisteredClaims, alg string, edPub json.RawMessage) string {
	var j struct{ Kid string }
	_ = json.Unmarshal(edPub, &j)
	other := authn.AlgES256
	if alg != authn.AlgEdDSA {
		other = alg // an ES256 or RS256 token under the Ed25519 key's kid
	}
	priv, _ := keyFile(t, other)
	return mintKid(t, priv, j.Kid, c)
}

// TestBearerToken: the header's forms.
func TestBearerToken(t *testing.T) {
	for header, want := range map[string]error{"": authn.ErrNoToken, "Basic YTpi": authn.ErrNoToken,
		"Bearer": authn.ErrInvalidToken, "Bearer ": authn.ErrInvalidToken, "bearer abc": nil, "Bearer  abc": nil} {
		tok, err := authn.BearerToken(header)
		if !errors.Is(err, want) || (want == nil && tok != "abc") {
			t.Errorf("BearerToken(%q) = %q, %v; want %v", header, tok, err, want)
		}
	}
}

// TestClaimsBeforeSignature: a token whose claims are refused is refused for them before its
// signature is checked (so it costs no signature check): forged and expired reads "expired",
// not "bad signature"; the negative control, forged with good claims, reads "bad signature".
func TestClaimsBeforeSignature(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	file := t.TempDir() + "/jwks.json"
	priv, pub := keyFile(t, authn.AlgEdDSA)
	otherPriv, _ := keyFile(t, authn.AlgEdDSA)
	writeJWKS(t, file, pub)
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: aud, Issuer: iss, Now: clk.now, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	forger, err := authn.NewSigner(authn.SignerConfig{Key: otherPriv, Kid: signer(t, priv, nil).Kid(), Audience: aud, Issuer: iss})
	if err != nil {
		t.Fatal(err)
	}
	good := jwt.RegisteredClaims{Subject: "42", Audience: jwt.ClaimStrings{aud}, Issuer: iss, ExpiresAt: jwt.NewNumericDate(t0.Add(time.Minute))}
	for why, c := range map[string]func(c *jwt.RegisteredClaims){
		"bad signature":     func(*jwt.RegisteredClaims) {},
		"expired":           func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(t0.Add(-time.Minute)) },
		"another audience":  func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"other"} },
		"another issuer":    func(c *jwt.RegisteredClaims) { c.Issuer = "https://other.test" },
		"sub is not a user": func(c *jwt.RegisteredClaims) { c.Subject = "bob" },
	} {
		claims := good
		c(&claims)
		if _, err := v.Verify(mint(t, forger, claims)); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("forged, %s: %v", why, err)
		}
	}
}
