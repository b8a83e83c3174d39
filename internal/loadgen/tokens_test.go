package loadgen

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/authn"
)

// TestTargeterSigns: with Tokens, each purchase carries its buyer's token, which proves that
// buyer's id to a verifier of the key, and a repeating buyer sends the same token again.
func TestTargeterSigns(t *testing.T) {
	priv, pub, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: "a", Issuer: "i"})
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/jwks.json"
	if err := writeFileForTest(file, authn.JWKS(pub)); err != nil {
		t.Fatal(err)
	}
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: "a", Issuer: "i"})
	if err != nil {
		t.Fatal(err)
	}
	tr := newTargeter([]string{"http://x/api/v1/products/1/purchase"}, newBuyers(10, 0.5, 3), NewTokens(s))
	seen := map[int64]string{}
	for range 50 {
		var tgt vegeta.Target
		if err := tr(&tgt); err != nil {
			t.Fatal(err)
		}
		var body struct {
			UserID int64 `json:"user_id"`
		}
		_ = json.Unmarshal(tgt.Body, &body)
		tok, ok := strings.CutPrefix(tgt.Header.Get("Authorization"), "Bearer ")
		user, err := v.Verify(tok)
		if !ok || err != nil || user != body.UserID || tgt.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("buyer %d: token of %d (%v), header %v", body.UserID, user, err, tgt.Header)
		}
		if old, again := seen[user]; again && old != tok {
			t.Fatalf("buyer %d got a second token", user)
		}
		seen[user] = tok
	}
	if len(seen) == 50 {
		t.Fatal("no buyer repeated: the test proves nothing of reuse")
	}
}

func writeFileForTest(name string, b []byte) error { return os.WriteFile(name, b, 0o600) }

// TestPremint: the pool serves its users without minting, is kept while fresh enough for the
// next attack and minted again when not; a user outside it is minted on demand, and counted.
// maxBuyers bounds an attack's buyers by its requests, and a paced run's by its schedule.
func TestPremint(t *testing.T) {
	priv, _, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: "a", Issuer: "i", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tk := NewTokens(s)
	ctx, soon := t.Context(), time.Now().Add(time.Minute)
	if n, err := tk.Premint(ctx, 5, 50, soon); n != 50 || err != nil {
		t.Fatalf("Premint = %d, %v; want 50", n, err)
	}
	for user := int64(5); user < 55; user++ {
		if _, err := tk.Token(ctx, user); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := tk.Premint(ctx, 5, 50, soon); n != 0 || tk.Late() != 0 {
		t.Fatalf("again: minted %d, late %d; want the pool kept", n, tk.Late())
	}
	if n, _ := tk.Premint(ctx, 5, 50, time.Now().Add(50*time.Minute)); n != 50 {
		t.Fatalf("for an attack past the pool's freshness: minted %d, want 50", n)
	}
	if _, err := tk.Token(ctx, 55); err != nil || tk.Late() != 1 {
		t.Fatalf("a user outside the pool: late %d, want 1", tk.Late())
	}
	c := DefaultConfig()
	c.Rate, c.Duration, c.Requests = 100, 2*time.Second, 1_000_000
	if got := c.maxBuyers(); got != 201 {
		t.Errorf("open, 100/s for 2 s: maxBuyers = %d, want 201", got)
	}
	c.Rate, c.Requests = 0, 300
	if got := c.maxBuyers(); got != 300 {
		t.Errorf("closed, 300 requests: maxBuyers = %d, want 300", got)
	}
}
