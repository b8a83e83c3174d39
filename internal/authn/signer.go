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

// Signer mints buyers' tokens for tests and load tests. Safe for concurrent use.
type Signer struct {
	cfg    SignerConfig
	key    crypto.Signer
	method jwt.SigningMethod
}

// NewSigner returns a Signer, or an error for an unusable key or missing field.
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

// Token mints user's token, valid for TTL from now, and returns it with its exp.
func (s *Signer) Token(user int64) (string, time.Time, error) {
	now := s.cfg.Now().Truncate(time.Second)
	exp := now.Add(s.cfg.TTL)
	return s.Mint(jwt.RegisteredClaims{
		Subject: strconv.FormatInt(user, 10), Audience: jwt.ClaimStrings{s.cfg.Audience}, Issuer: s.cfg.Issuer,
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	})
}

// Mint signs claims as they are, for tests of bad tokens.
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

// GenerateKey returns a new PKCS#8 PEM key for alg and its public JWK.
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
