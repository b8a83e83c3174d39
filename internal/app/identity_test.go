package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/order"
)

const (
	buyerAud = "seckill-test"
	buyerIss = "https://id.test"
)

// identity is an API with buyer identity on, and the signers of its tests.
type identity struct {
	*stack
	good, forger *authn.Signer // forger: another key under good's kid
}

func newIdentity(t *testing.T) identity {
	t.Helper()
	priv, pub, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	otherPriv, _, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/jwks.json"
	if err := os.WriteFile(file, authn.JWKS(pub), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: buyerAud, Issuer: buyerIss, Leeway: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	base := newStack(t, order.Config{})
	s := serve(t, app.Config{DB: base.DB, Redis: base.Redis, RedisPrefix: base.Prefix, AdminToken: adminToken, Buyers: v})
	good := mustSigner(t, priv, "")
	return identity{stack: s, good: good, forger: mustSigner(t, otherPriv, good.Kid())}
}

func mustSigner(t *testing.T, priv []byte, kid string) *authn.Signer {
	t.Helper()
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Kid: kid, Audience: buyerAud, Issuer: buyerIss})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// token is user's token, with change applied to its claims (nil: as a Signer mints it).
func (id identity) token(t *testing.T, s *authn.Signer, user int64, change func(c *jwt.RegisteredClaims)) string {
	t.Helper()
	now := time.Now().Truncate(time.Second)
	c := jwt.RegisteredClaims{Subject: fmt.Sprint(user), Audience: jwt.ClaimStrings{buyerAud}, Issuer: buyerIss,
		NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))}
	if change != nil {
		change(&c)
	}
	tok, _, err := s.Mint(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestBuyerIdentity: with buyer identity on, each buyer route refuses a request without a
// token, and with a forged, expired, not-yet-valid, wrong-audience, wrong-issuer or alg=none
// token, 401 with WWW-Authenticate, and writes nothing; a body user_id that is not the
// token's is 403 user_mismatch; another user's order answers exactly as a missing one (404
// order_not_found), for the lookup, pay and cancel, and stays as it was. The negative
// controls: the right token buys, looks up and cancels its own order. Every exchange is
// checked against the OpenAPI description.
func TestBuyerIdentity(t *testing.T) {
	t.Parallel()
	id := newIdentity(t)
	p := id.createProduct(t, 5, "dlock", 0)
	other := id.createProduct(t, 5, "dlock", 0)
	_, err := id.API.CreateProduct(t.Context(), api.NewProduct{Name: "r", Stock: new(5), Strategy: "dlock", PayWithinMS: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	reserved := p.ID + 2 // created last, after other
	third := id.createProduct(t, 5, "dlock", 0)
	alice, bob := int64(1), int64(2)
	aliceTok, bobTok := id.token(t, id.good, alice, nil), id.token(t, id.good, bob, nil)
	now := time.Now()

	buy := fmt.Sprintf("/api/v1/products/%d/purchase", p.ID)
	bundle := "/api/v1/bundles/purchase"
	bundleBody := fmt.Sprintf(`{"product_ids":[%d,%d]}`, p.ID, other.ID)
	orderOf := func(product, user int64) string { return fmt.Sprintf("/api/v1/products/%d/orders/%d", product, user) }
	routes := []struct{ method, path, body string }{
		{"POST", buy, `{}`},
		{"POST", bundle, bundleBody},
		{"GET", orderOf(p.ID, alice), ``},
		{"POST", orderOf(reserved, alice) + "/pay", ``},
		{"POST", orderOf(reserved, alice) + "/cancel", ``},
	}
	bad := []struct{ name, token, why string }{
		{"no token", "", ""},
		{"forged", id.token(t, id.forger, alice, nil), "bad signature"},
		{"expired", id.token(t, id.good, alice, func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute)) }), "expired"},
		{"not yet valid", id.token(t, id.good, alice, func(c *jwt.RegisteredClaims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Minute)) }), "not valid yet"},
		{"wrong audience", id.token(t, id.good, alice, func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"another-shop"} }), "for another audience"},
		{"wrong issuer", id.token(t, id.good, alice, func(c *jwt.RegisteredClaims) { c.Issuer = "https://evil.test" }), "from another issuer"},
		{"alg none", algNone(t, alice, id.good.Kid()), "alg not accepted"},
		{"garbage", "not-a-jwt", "malformed"},
	}
	for _, r := range routes {
		for _, b := range bad {
			status, code, body, hdr, err := id.do(r.method, r.path, b.token, r.body)
			challenge := hdr.Get("WWW-Authenticate")
			wantChallenge := `Bearer realm="seckill"`
			if b.why != "" {
				wantChallenge += `, error="invalid_token", error_description="the token is ` + b.why
			}
			if err != nil || status != 401 || code != api.CodeUnauthorized || !strings.HasPrefix(challenge, wantChallenge) {
				t.Errorf("%s %s, %s: %d %s %q %s %v; want 401 unauthorized, %q", r.method, r.path, b.name, status, code, challenge, body, err, wantChallenge)
			}
		}
	}
	for _, product := range []int64{p.ID, other.ID, reserved} {
		if a := id.audit(t, product); a.Orders != 0 {
			t.Fatalf("product %d: %d orders after refused requests, want none", product, a.Orders)
		}
	}

	// The negative controls, and what a valid token may not do.
	expect := func(what, method, path, token, body string, status int, code string) []byte {
		t.Helper()
		got, gotCode, b, _, err := id.do(method, path, token, body)
		if err != nil || got != status || gotCode != code {
			t.Fatalf("%s: %s %s = %d %s %s %v; want %d %s", what, method, path, got, gotCode, b, err, status, code)
		}
		return b
	}
	var o api.Order
	mustJSON(t, expect("alice buys, no user_id", "POST", buy, aliceTok, `{}`, 201, ""), &o)
	if o.UserID != alice {
		t.Fatalf("alice's purchase is user %d's", o.UserID)
	}
	expect("alice buys with her own user_id", "POST", fmt.Sprintf("/api/v1/products/%d/purchase", other.ID), aliceTok, `{"user_id":1}`, 201, "")
	expect("bob buys as alice", "POST", buy, bobTok, `{"user_id":1}`, 403, api.CodeUserMismatch)
	expect("bob bundles as alice", "POST", bundle, bobTok, fmt.Sprintf(`{"user_id":1,"product_ids":[%d]}`, third.ID), 403, api.CodeUserMismatch)
	expect("alice reserves", "POST", fmt.Sprintf("/api/v1/products/%d/purchase", reserved), aliceTok, `{}`, 201, "")

	// Bob on alice's orders answers byte for byte (but the request id) as on an order that
	// does not exist, user 99's; alice's reservation stays pending.
	for _, path := range []string{orderOf(p.ID, alice), orderOf(reserved, alice) + "/pay", orderOf(reserved, alice) + "/cancel"} {
		method := map[bool]string{true: "GET", false: "POST"}[path == orderOf(p.ID, alice)]
		theirs := expect("bob on alice's order", method, path, bobTok, ``, 404, api.CodeOrderNotFound)
		missing := expect("bob on a missing order", method, strings.Replace(path, "/orders/1", "/orders/99", 1),
			id.token(t, id.good, 99, nil), ``, 404, api.CodeOrderNotFound)
		if a, b := withoutRequestID(t, theirs), withoutRequestID(t, missing); a != b {
			t.Errorf("%s: another user's order answers %s, a missing one %s", path, a, b)
		}
	}
	mustJSON(t, expect("alice looks up her reservation", "GET", orderOf(reserved, alice), aliceTok, ``, 200, ""), &o)
	if o.Status != api.StatusPending {
		t.Fatalf("alice's reservation is %s after bob's pay and cancel, want pending", o.Status)
	}
	mustJSON(t, expect("alice cancels her reservation", "POST", orderOf(reserved, alice)+"/cancel", aliceTok, ``, 200, ""), &o)
	if o.Status != api.StatusCancelled {
		t.Fatalf("alice's cancel: %s", o.Status)
	}
	var bb api.Bundle
	mustJSON(t, expect("bob bundles for himself", "POST", bundle, bobTok, fmt.Sprintf(`{"product_ids":[%d]}`, third.ID), 201, ""), &bb)
	if len(bb.Orders) != 1 || bb.Orders[0].UserID != bob {
		t.Fatalf("bob's bundle: %+v", bb)
	}
}

// withoutRequestID is a problem body with its request_id blanked.
func withoutRequestID(t *testing.T, body []byte) string {
	t.Helper()
	var p map[string]any
	mustJSON(t, body, &p)
	p["request_id"] = ""
	b, _ := json.Marshal(p)
	return string(b)
}

// algNone is an unsigned token ("alg": "none") for user.
func algNone(t *testing.T, user int64, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Subject: fmt.Sprint(user),
		Audience: jwt.ClaimStrings{buyerAud}, Issuer: buyerIss, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Minute))})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
