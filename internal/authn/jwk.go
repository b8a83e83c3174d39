package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// The algorithms a key may sign with, one per kind of key: Ed25519 (OKP), P-256 (EC) and RSA.
const (
	AlgEdDSA = "EdDSA"
	AlgES256 = "ES256"
	AlgRS256 = "RS256"
)

// minRSABits is the least RSA modulus accepted, as NIST SP 800-131A allows for signatures;
// the most is go-jose's jose.MaxRSAModulusBits, 4096.
const minRSABits = 2048

// key is a public key of a JWKS, with the one algorithm it verifies.
type key struct {
	kid string
	alg string
	pub crypto.PublicKey
}

// parseJWKS reads a JWK Set (RFC 7517 section 5) of public signing keys, by kid. A key
// of another kind, or for encryption ("use": "enc"), is an error, not skipped: a
// set that says less than its author meant must not start a server.
func parseJWKS(data []byte) (map[string]key, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("jwks: no keys")
	}
	keys := make(map[string]key, len(set.Keys))
	for i, raw := range set.Keys {
		var j jose.JSONWebKey
		if err := j.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("jwks: key %d: %w (%s)", i, err, accepted)
		}
		if !j.IsPublic() {
			return nil, fmt.Errorf("jwks: key %d (%q) is a private or symmetric key: publish the public part only", i, j.KeyID)
		}
		k, err := keyOf(j)
		if err != nil {
			return nil, fmt.Errorf("jwks: key %d (%q): %w", i, j.KeyID, err)
		}
		if _, dup := keys[k.kid]; dup {
			return nil, fmt.Errorf("jwks: key %d: kid %q twice", i, k.kid)
		}
		keys[k.kid] = k
	}
	return keys, nil
}

const accepted = "only OKP Ed25519 (EdDSA), EC P-256 (ES256) and RSA of 2048 to 4096 bits (RS256)"

// keyOf returns the public key of j, whose Key is public, with its algorithm, checking that
// its kind, alg and use agree.
func keyOf(j jose.JSONWebKey) (key, error) {
	if j.Use != "" && j.Use != "sig" {
		return key{}, fmt.Errorf("use %q: only signing keys (sig)", j.Use)
	}
	alg, err := algOf(j.Key)
	if err != nil {
		return key{}, err
	}
	if j.Algorithm != "" && j.Algorithm != alg {
		return key{}, fmt.Errorf("alg %q does not fit the key (%s)", j.Algorithm, alg)
	}
	return key{kid: j.KeyID, alg: alg, pub: j.Key}, nil
}

// algOf is the algorithm of a public key of one of the three kinds.
func algOf(pub crypto.PublicKey) (string, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return AlgEdDSA, nil
	case *ecdsa.PublicKey:
		if p.Curve == elliptic.P256() {
			return AlgES256, nil
		}
	case *rsa.PublicKey:
		if n := p.N.BitLen(); n < minRSABits || n > jose.MaxRSAModulusBits {
			return "", fmt.Errorf("an RSA key of %d bits: %d to %d", n, minRSABits, jose.MaxRSAModulusBits)
		}
		if p.E < 3 || p.E%2 == 0 || p.E > 1<<31-1 {
			return "", errors.New("e: not a valid RSA exponent")
		}
		return AlgRS256, nil
	}
	return "", errors.New(accepted)
}

// ParsePrivateKey reads a private JWK or PEM key (PKCS#8, SEC 1, PKCS#1) and returns it with
// its algorithm and kid (empty for PEM); other keys are an error.
func ParsePrivateKey(data []byte) (priv crypto.Signer, alg, kid string, err error) {
	if block, _ := pem.Decode(data); block != nil {
		if priv, err = parsePEM(block); err != nil {
			return nil, "", "", err
		}
		alg, err = algOf(priv.Public())
		if err != nil {
			return nil, "", "", fmt.Errorf("private key: %w", err)
		}
		return priv, alg, "", nil
	}
	var j jose.JSONWebKey
	if err := j.UnmarshalJSON(data); err != nil {
		return nil, "", "", fmt.Errorf("private key: neither PEM nor a JWK: %w", err)
	}
	k, err := keyOf(j.Public())
	if err != nil {
		return nil, "", "", fmt.Errorf("private key: %w", err)
	}
	switch p := j.Key.(type) {
	case ed25519.PrivateKey: // go-jose checked that x is d's
		priv = p
	case *ecdsa.PrivateKey: // go-jose does not check that x and y are d's
		var raw []byte
		if raw, err = p.Bytes(); err == nil {
			priv, err = ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
		}
		if err == nil && !priv.Public().(*ecdsa.PublicKey).Equal(k.pub) {
			err = errors.New("d does not belong to the public part")
		}
	case *rsa.PrivateKey: // go-jose checked n = pq and Validate
		p.Precompute()
		priv = p
	default:
		err = errors.New("a public key, not a private one")
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("private key: %w", err)
	}
	return priv, k.alg, j.KeyID, nil
}

func parsePEM(block *pem.Block) (crypto.Signer, error) {
	var k any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("private key: a PEM %q block, not a private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key: %T cannot sign", k)
	}
	return s, nil
}

// PublicJWK returns pub's JWK, named kid (empty: its Thumbprint).
func PublicJWK(pub crypto.PublicKey, kid string) (json.RawMessage, error) {
	alg, err := algOf(pub)
	if err != nil {
		return nil, err
	}
	if kid == "" {
		if kid, err = Thumbprint(pub); err != nil {
			return nil, err
		}
	}
	return json.Marshal(jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: alg, Use: "sig"})
}

// Thumbprint returns pub's RFC 7638 thumbprint (SHA-256, base64url), the default kid.
func Thumbprint(pub crypto.PublicKey) (string, error) {
	if _, err := algOf(pub); err != nil {
		return "", err
	}
	sum, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// JWKS returns the JWK Set of keys, indented.
func JWKS(keys ...json.RawMessage) []byte {
	b, _ := json.MarshalIndent(struct {
		Keys []json.RawMessage `json:"keys"`
	}{keys}, "", "  ")
	return append(b, '\n')
}
