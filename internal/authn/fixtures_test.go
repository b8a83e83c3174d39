package authn_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
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

// TestThumbprintAndPublicJWK: Thumbprint agrees with RFC 7638's and RFC 8037's examples and
// with Node's thumbprints of its keys (testdata/thumbprints.js), and the public JWK that
// PublicJWK writes for Node's keys verifies Node's tokens.
func TestThumbprintAndPublicJWK(t *testing.T) {
	for _, c := range []struct{ jwk, want string }{
		{`{"kty":"RSA","e":"AQAB","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"}`,
			"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"}, // RFC 7638 section 3.1
		{`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`,
			"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"}, // RFC 8037 appendix A.3
	} {
		if got, err := authn.ThumbprintOfJWK([]byte(c.jwk)); got != c.want {
			t.Errorf("Thumbprint = %q, %v; want %q", got, err, c.want)
		}
	}
	var want map[string]string
	if err := json.Unmarshal(read(t, "node.thumbprints.json"), &want); err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/jwks.json"
	var pubs []json.RawMessage
	for _, k := range kinds {
		priv, _, _, err := authn.ParsePrivateKey(read(t, k+".pem"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := authn.Thumbprint(priv.Public()); err != nil || got != want["node-"+k] {
			t.Errorf("%s: Thumbprint = %q, %v; want Node's %q", k, got, err, want["node-"+k])
		}
		pub, err := authn.PublicJWK(priv.Public(), "node-"+k)
		if err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, pub)
	}
	writeJWKS(t, file, pubs...)
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: "seckill", Issuer: "https://id.example", Now: at, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if user, err := v.Verify(strings.TrimSpace(string(read(t, k+".token")))); err != nil || user != 4242 {
			t.Errorf("%s: Node's token against our public JWK: %d, %v", k, user, err)
		}
	}
}

// p384 is the public JWK of a valid P-384 key, a curve the verifier does not accept.
func p384(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.PublicKey.Bytes() // 0x04 || x || y, 48 bytes each
	enc := base64.RawURLEncoding.EncodeToString
	return `{"kty":"EC","crv":"P-384","x":"` + enc(b[1:49]) + `","y":"` + enc(b[49:]) + `"}`
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
		"P-384 short":  `{"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}]}`,
		"P-384":        `{"keys":[` + p384(t) + `]}`,
		"X25519":       `{"keys":[{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}]}`,
		"low order":    `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + strings.Repeat("A", 43) + `"}]}`,
		"RSA 8192":     `{"keys":[{"kty":"RSA","e":"AQAB","n":"w` + strings.Repeat("A", 1365) + `"}]}`,
		"RSA e even":   `{"keys":[{"kty":"RSA","e":"AQAC","n":"w` + strings.Repeat("A", 341) + `"}]}`,
		"encryption":   `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM","use":"enc"}]}`,
		"alg mismatch": `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM","alg":"RS256"}]}`,
		"no kty":       `{"keys":[{"crv":"Ed25519","x":"u60zLzosiFaobSoqXI8T_Xp0-Sr-rI-LMk3sA-3zXVM"}]}`,
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

// TestPrivateKeyRefused: a private JWK whose d is another key's, a public JWK, and a private
// key for encryption are refused; the negative control, Node's key as it is, is read.
func TestPrivateKeyRefused(t *testing.T) {
	otherD := map[string]string{}
	for _, k := range kinds {
		var j map[string]any
		if err := json.Unmarshal(read(t, k+".private.jwk"), &j); err != nil {
			t.Fatal(err)
		}
		d := make([]byte, 32)
		d[31] = 7 // a valid scalar and seed, of another key
		otherD[k] = base64.RawURLEncoding.EncodeToString(d)
		if k == "rsa" {
			otherD[k] = j["dp"].(string) // a number of the right kind, not d
		}
		with := func(name string, v any) []byte {
			c := map[string]any{}
			for n, x := range j {
				c[n] = x
			}
			if v == nil {
				delete(c, name)
			} else {
				c[name] = v
			}
			b, _ := json.Marshal(c)
			return b
		}
		if _, _, _, err := authn.ParsePrivateKey(with("kid", "node-"+k)); err != nil {
			t.Errorf("%s as it is: %v", k, err)
		}
		for name, b := range map[string][]byte{"another d": with("d", otherD[k]), "public": with("d", nil),
			"for encryption": with("use", "enc")} {
			if _, _, _, err := authn.ParsePrivateKey(b); err == nil {
				t.Errorf("%s, %s: accepted", k, name)
			}
		}
	}
}
