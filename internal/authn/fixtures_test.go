package authn_test

import (
	"crypto"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/authn"
)

// The fixtures in testdata were made by Node's crypto (testdata/make-fixtures.js), a JOSE
// implementation independent of this package's: its JWKs and tokens check our parsing of
// keys against another reading of the same standards.
var kinds = []string{"ed25519", "p256", "rsa"}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// at is a fixed clock inside the fixtures' validity (nbf 2023, exp 2100).
func at() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }

func nodeVerifier(t *testing.T) *authn.Verifier {
	t.Helper()
	v, err := authn.New(authn.Config{JWKSFile: "testdata/node.jwks.json", Audience: "seckill",
		Issuer: "https://id.example", Now: at, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNodeTokens: a token signed by Node with each kind of key verifies against Node's JWKS,
// and the same token with one bit of its signature changed does not.
func TestNodeTokens(t *testing.T) {
	v := nodeVerifier(t)
	for _, k := range kinds {
		token := strings.TrimSpace(string(read(t, k+".token")))
		user, err := v.Verify(token)
		if err != nil || user != 4242 {
			t.Errorf("%s: Verify = %d, %v; want 4242", k, user, err)
		}
		head, sig, _ := strings.Cut(token[strings.Index(token, ".")+1:], ".")
		_ = head
		b := []byte(sig)
		b[3] ^= 0x01 // a base64url digit of the signature's first bytes
		forged := token[:len(token)-len(sig)] + string(b)
		if _, err := v.Verify(forged); err == nil || !strings.Contains(err.Error(), "bad signature") {
			t.Errorf("%s: a changed signature: %v, want bad signature", k, err)
		}
	}
}

// TestNodePrivateKeys: Node's private JWK and its PKCS#8 PEM of one key read as the same key,
// and tokens a Signer mints with it verify against Node's JWKS.
func TestNodePrivateKeys(t *testing.T) {
	v := nodeVerifier(t)
	for _, k := range kinds {
		fromJWK, alg, kid, err := authn.ParsePrivateKey(read(t, k+".private.jwk"))
		if err != nil {
			t.Fatalf("%s JWK: %v", k, err)
		}
		fromPEM, alg2, kid2, err := authn.ParsePrivateKey(read(t, k+".pem"))
		if err != nil {
			t.Fatalf("%s PEM: %v", k, err)
		}
		eq, _ := fromJWK.(interface{ Equal(crypto.PrivateKey) bool })
		if eq == nil || !eq.Equal(fromPEM) || alg != alg2 || kid != "node-"+k || kid2 != "" {
			t.Errorf("%s: JWK and PEM differ: alg %s/%s kid %q/%q", k, alg, alg2, kid, kid2)
		}
		for _, file := range []string{k + ".private.jwk", k + ".pem"} {
			s, err := authn.NewSigner(authn.SignerConfig{Key: read(t, file), Kid: "node-" + k, Audience: "seckill",
				Issuer: "https://id.example", Now: at})
			if err != nil {
				t.Fatal(err)
			}
			token, _, err := s.Token(77)
			if err != nil {
				t.Fatal(err)
			}
			if user, err := v.Verify(token); err != nil || user != 77 {
				t.Errorf("%s: a token our Signer minted: %d, %v", file, user, err)
			}
		}
	}
}

// TestJWKSRefused: a key set that says something the verifier cannot honour is an error,
// never a set with that key left out.
func TestJWKSRefused(t *testing.T) {
	ed := `{"kty":"OKP","crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM","kid":"a"}`
	for name, set := range map[string]string{
		"not json":     `{`,
		"no keys":      `{"keys":[]}`,
		"private":      `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM","d":"jP2cXSep2_UnBkEdkE1pFwcVvnIo6VCCtziwGERabAM"}]}`,
		"symmetric":    `{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"h"}]}`,
		"P-384":        `{"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}]}`,
		"encryption":   `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM","use":"enc"}]}`,
		"alg mismatch": `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM","alg":"RS256"}]}`,
		"short x":      `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"u60zLzos"}]}`,
		"same kid":     `{"keys":[` + ed + `,` + ed + `]}`,
		"RSA 1024":     `{"keys":[{"kty":"RSA","e":"AQAB","n":"w` + strings.Repeat("A", 170) + `"}]}`,
		"off curve":    `{"keys":[{"kty":"EC","crv":"P-256","x":"` + strings.Repeat("A", 43) + `","y":"` + strings.Repeat("A", 42) + `E"}]}`,
	} {
		f := t.TempDir() + "/jwks.json"
		if err := os.WriteFile(f, []byte(set), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := authn.New(authn.Config{JWKSFile: f, Audience: "a", Issuer: "i"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The negative control: the valid key alone is accepted.
	f := t.TempDir() + "/jwks.json"
	_ = os.WriteFile(f, []byte(`{"keys":[`+ed+`]}`), 0o600)
	if _, err := authn.New(authn.Config{JWKSFile: f, Audience: "a", Issuer: "i"}); err != nil {
		t.Errorf("a valid set: %v", err)
	}
}
