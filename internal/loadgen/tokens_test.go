package loadgen

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

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
