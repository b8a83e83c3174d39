package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
)

// The algorithms a key may sign with, one per kind of key: Ed25519 (OKP), P-256 (EC) and RSA.
const (
	AlgEdDSA = "EdDSA"
	AlgES256 = "ES256"
	AlgRS256 = "RS256"
)

// minRSABits is the least RSA modulus accepted, as NIST SP 800-131A allows for signatures.
const minRSABits = 2048

// jwk is one JSON Web Key (RFC 7517), public or private, of the three kinds accepted.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	D   string `json:"d,omitempty"` // private keys only (RSA: with P and Q)
	P   string `json:"p,omitempty"`
	Q   string `json:"q,omitempty"`
}

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
		var j jwk
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("jwks: key %d: %w", i, err)
		}
		if j.D != "" {
			return nil, fmt.Errorf("jwks: key %d (%q) is a private key: publish the public part only", i, j.Kid)
		}
		k, err := j.public()
		if err != nil {
			return nil, fmt.Errorf("jwks: key %d (%q): %w", i, j.Kid, err)
		}
		if _, dup := keys[k.kid]; dup {
			return nil, fmt.Errorf("jwks: key %d: kid %q twice", i, k.kid)
		}
		keys[k.kid] = k
	}
	return keys, nil
}

// public returns the public key of j and its algorithm, checking that kty, crv, alg and use
// agree.
func (j jwk) public() (key, error) {
	if j.Use != "" && j.Use != "sig" {
		return key{}, fmt.Errorf("use %q: only signing keys (sig)", j.Use)
	}
	k := key{kid: j.Kid}
	switch {
	case j.Kty == "OKP" && j.Crv == "Ed25519":
		x, err := b64(j.X, "x")
		if err != nil {
			return key{}, err
		}
		if len(x) != ed25519.PublicKeySize {
			return key{}, fmt.Errorf("x: %d bytes, an Ed25519 key has %d", len(x), ed25519.PublicKeySize)
		}
		k.alg, k.pub = AlgEdDSA, ed25519.PublicKey(x)
	case j.Kty == "EC" && j.Crv == "P-256":
		x, err := b64(j.X, "x")
		if err != nil {
			return key{}, err
		}
		y, err := b64(j.Y, "y")
		if err != nil {
			return key{}, err
		}
		if len(x) != 32 || len(y) != 32 {
			return key{}, errors.New("x and y of a P-256 key have 32 bytes each")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return key{}, err
		}
		k.alg, k.pub = AlgES256, pub
	case j.Kty == "RSA":
		n, err := b64(j.N, "n")
		if err != nil {
			return key{}, err
		}
		e, err := b64(j.E, "e")
		if err != nil {
			return key{}, err
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits {
			return key{}, fmt.Errorf("an RSA key of %d bits: at least %d", pub.N.BitLen(), minRSABits)
		}
		if len(e) > 4 || pub.E < 3 || pub.E%2 == 0 {
			return key{}, errors.New("e: not a valid RSA exponent")
		}
		k.alg, k.pub = AlgRS256, pub
	default:
		return key{}, fmt.Errorf("kty %q crv %q: only OKP Ed25519 (EdDSA), EC P-256 (ES256) and RSA (RS256)", j.Kty, j.Crv)
	}
	if j.Alg != "" && j.Alg != k.alg {
		return key{}, fmt.Errorf("alg %q does not fit a %s key (%s)", j.Alg, j.Kty, k.alg)
	}
	return k, nil
}

func b64(s, name string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("%s: not base64url without padding", name)
	}
	return b, nil
}

// ParsePrivateKey reads a private signing key: a private JWK (with kid, which names it in
// the tokens it signs), or a PEM block (PKCS#8, or SEC 1 "EC PRIVATE KEY", or PKCS#1 "RSA
// PRIVATE KEY"), whose kid is the one the caller gives. It returns the key, its algorithm
// and its kid, or an error for any other kind of key.
func ParsePrivateKey(data []byte) (priv crypto.Signer, alg, kid string, err error) {
	if block, _ := pem.Decode(data); block != nil {
		priv, err = parsePEM(block)
		if err != nil {
			return nil, "", "", err
		}
		alg, err = algOf(priv.Public())
		return priv, alg, "", err
	}
	var j jwk
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, "", "", fmt.Errorf("private key: neither PEM nor a JWK: %w", err)
	}
	pub, err := j.public()
	if err != nil {
		return nil, "", "", fmt.Errorf("private key: %w", err)
	}
	d, err := b64(j.D, "d")
	if err != nil {
		return nil, "", "", fmt.Errorf("private key: %w", err)
	}
	switch p := pub.pub.(type) {
	case ed25519.PublicKey:
		if len(d) != ed25519.SeedSize {
			return nil, "", "", errors.New("private key: d of an Ed25519 key has 32 bytes")
		}
		priv = ed25519.NewKeyFromSeed(d)
	case *ecdsa.PublicKey:
		priv, err = ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	case *rsa.PublicKey:
		priv, err = rsaPrivate(j, p, d)
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("private key: %w", err)
	}
	if !publicEqual(priv.Public(), pub.pub) {
		return nil, "", "", errors.New("private key: d does not belong to the public part")
	}
	return priv, pub.alg, j.Kid, nil
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

// rsaPrivate builds an RSA private key from a JWK's n, e, d, p and q.
func rsaPrivate(j jwk, pub *rsa.PublicKey, d []byte) (*rsa.PrivateKey, error) {
	p, err := b64(j.P, "p")
	if err != nil {
		return nil, err
	}
	q, err := b64(j.Q, "q")
	if err != nil {
		return nil, err
	}
	k := &rsa.PrivateKey{PublicKey: *pub, D: new(big.Int).SetBytes(d),
		Primes: []*big.Int{new(big.Int).SetBytes(p), new(big.Int).SetBytes(q)}}
	if err := k.Validate(); err != nil {
		return nil, err
	}
	k.Precompute()
	return k, nil
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
		if p.N.BitLen() >= minRSABits {
			return AlgRS256, nil
		}
	}
	return "", errors.New("private key: only Ed25519, P-256 and RSA of 2048 bits or more")
}

func publicEqual(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}

// PublicJWK returns the public JWK of pub, named kid (empty: its Thumbprint), with its alg
// and "use": "sig": one entry of a JWKS. pub must be of a kind ParsePrivateKey accepts.
func PublicJWK(pub crypto.PublicKey, kid string) (json.RawMessage, error) {
	j, err := publicJWK(pub)
	if err != nil {
		return nil, err
	}
	if kid == "" {
		kid = j.thumbprint()
	}
	j.Kid, j.Use = kid, "sig"
	return json.Marshal(j)
}

// Thumbprint is the RFC 7638 thumbprint of pub (SHA-256, base64url): the kid that keys made
// by `loadtest keys` carry, and that a signer whose key file names none uses.
func Thumbprint(pub crypto.PublicKey) (string, error) {
	j, err := publicJWK(pub)
	if err != nil {
		return "", err
	}
	return j.thumbprint(), nil
}

// thumbprint hashes the key's required members in lexicographic order (RFC 7638 section 3.2).
func (j jwk) thumbprint() string {
	var s string
	switch j.Kty {
	case "OKP":
		s = fmt.Sprintf(`{"crv":%q,"kty":%q,"x":%q}`, j.Crv, j.Kty, j.X)
	case "EC":
		s = fmt.Sprintf(`{"crv":%q,"kty":%q,"x":%q,"y":%q}`, j.Crv, j.Kty, j.X, j.Y)
	default:
		s = fmt.Sprintf(`{"e":%q,"kty":%q,"n":%q}`, j.E, j.Kty, j.N)
	}
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// publicJWK is the public JWK of pub, with its alg, without kid and use.
func publicJWK(pub crypto.PublicKey) (jwk, error) {
	alg, err := algOf(pub)
	if err != nil {
		return jwk{}, err
	}
	j := jwk{Alg: alg}
	enc := base64.RawURLEncoding.EncodeToString
	switch p := pub.(type) {
	case ed25519.PublicKey:
		j.Kty, j.Crv, j.X = "OKP", "Ed25519", enc(p)
	case *ecdsa.PublicKey:
		b, err := p.Bytes()
		if err != nil {
			return jwk{}, err
		}
		j.Kty, j.Crv, j.X, j.Y = "EC", "P-256", enc(b[1:33]), enc(b[33:])
	case *rsa.PublicKey:
		j.Kty, j.N, j.E = "RSA", enc(p.N.Bytes()), enc(big.NewInt(int64(p.E)).Bytes())
	}
	return j, nil
}

// JWKS returns a JWK Set of the given public JWKs (PublicJWK), indented, with a final newline.
func JWKS(keys ...json.RawMessage) []byte {
	b, _ := json.MarshalIndent(struct {
		Keys []json.RawMessage `json:"keys"`
	}{keys}, "", "  ")
	return append(b, '\n')
}
