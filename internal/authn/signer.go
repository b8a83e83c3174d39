package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// SignerConfig says what tokens a Signer mints.
type SignerConfig struct {
	Key      []byte // required: a private key as ParsePrivateKey reads it
	Kid      string // the tokens' kid; empty: the key file's kid, else the key's Thumbprint
	Audience string // required
	Issuer   string // required
	// TTL is how long a token is valid from its minting; 0: DefaultTTL.
	TTL time.Duration
	Now func() time.Time // default time.Now
}

// DefaultTTL is the life of a token a Signer mints unless told otherwise.
const DefaultTTL = time.Hour

// Signer mints buyers' tokens: the identity provider's part, played by the load tester and
// the tests. It is safe for concurrent use.
type Signer struct {
	cfg    SignerConfig
	key    crypto.Signer
	method jwt.SigningMethod
}

// NewSigner returns a Signer of cfg, or an error for a key it cannot use or a missing field.
func NewSigner(cfg SignerConfig) (*Signer, error) {
	if cfg.Audience == "" || cfg.Issuer == "" {
		return nil, errors.New("authn: a signer needs an audience and an issuer")
	}
	key, alg, kid, err := ParsePrivateKey(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("authn: %w", err)
	}
	if cfg.Kid == "" {
		cfg.Kid = kid
	}
	if cfg.Kid == "" {
		if cfg.Kid, err = Thumbprint(key.Public()); err != nil {
			return nil, err
		}
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Signer{cfg: cfg, key: key, method: jwt.GetSigningMethod(alg)}, nil
}

// Kid is the kid of the tokens s mints.
func (s *Signer) Kid() string { return s.cfg.Kid }

// Token mints a token that proves user: sub user, s's aud and iss, iat and nbf now, exp
// now + TTL. It returns the token and its exp.
func (s *Signer) Token(user int64) (string, time.Time, error) {
	now := s.cfg.Now().Truncate(time.Second)
	exp := now.Add(s.cfg.TTL)
	return s.Mint(jwt.RegisteredClaims{
		Subject: strconv.FormatInt(user, 10), Audience: jwt.ClaimStrings{s.cfg.Audience}, Issuer: s.cfg.Issuer,
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	})
}

// Mint signs claims as they are, with s's key and kid: tests use it for tokens Token would
// never mint (expired, for another audience, ...).
func (s *Signer) Mint(claims jwt.RegisteredClaims) (string, time.Time, error) {
	t := jwt.NewWithClaims(s.method, claims)
	t.Header["kid"] = s.cfg.Kid
	signed, err := t.SignedString(s.key)
	var exp time.Time
	if claims.ExpiresAt != nil {
		exp = claims.ExpiresAt.Time
	}
	return signed, exp, err
}

// GenerateKey makes a private key for alg (AlgEdDSA, AlgES256, or AlgRS256: 2048 bits) and
// returns it as a PKCS#8 PEM block, with its public JWK (PublicJWK, kid its Thumbprint).
func GenerateKey(alg string) (privatePEM, publicJWK []byte, err error) {
	var key crypto.Signer
	switch alg {
	case AlgEdDSA:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	case AlgES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case AlgRS256:
		key, err = rsa.GenerateKey(rand.Reader, minRSABits)
	default:
		return nil, nil, fmt.Errorf("authn: alg %q: %s, %s or %s", alg, AlgEdDSA, AlgES256, AlgRS256)
	}
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pub, err := PublicJWK(key.Public(), "")
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pub, nil
}
