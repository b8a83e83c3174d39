// Package authn verifies buyers' bearer tokens, JWTs signed with EdDSA, ES256 or RS256 by a
// key of a JWKS file that it rereads while it runs, and mints such tokens (Signer) for the
// load tester. It knows nothing of HTTP frameworks; docs/api.md#buyer-identity says why and
// how it is used.
package authn

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrNoToken is returned by BearerToken for a request without bearer credentials.
var ErrNoToken = errors.New("authn: no bearer token")

// ErrInvalidToken is returned by Verify; its text after the prefix says why, for the client.
var ErrInvalidToken = errors.New("authn: invalid token")

// Defaults of Config.
const (
	DefaultReload    = 5 * time.Second
	DefaultCacheSize = 65536
	// DefaultLeeway is the clock skew cmd/api allows by default (AUTH_CLOCK_SKEW).
	DefaultLeeway = 30 * time.Second
)

// maxTokenLen bounds the tokens Verify reads: a buyer's token is a few hundred bytes.
const maxTokenLen = 4096

// Config says which tokens a Verifier accepts.
type Config struct {
	JWKSFile string // required: a JWK Set of public keys, reread every Reload
	Audience string // required: one of the token's aud
	Issuer   string // required: the token's iss
	// Leeway is the clock skew allowed on exp and nbf, both ways; 0: none.
	Leeway time.Duration
	// Reload is how often Run rereads JWKSFile; 0: DefaultReload.
	Reload time.Duration
	// CacheSize bounds the verified tokens remembered until exp; 0: DefaultCacheSize; negative: none.
	CacheSize int
	Now       func() time.Time // default time.Now
	Logger    *slog.Logger     // reload errors and key changes; default: discard
}

// Verifier checks bearer tokens against a JWKS file's keys. Safe for concurrent use.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser    // the token's form and alg; its signature with the key verifyKey returns
	claims *jwt.Validator // exp, nbf, aud, iss: checked before the signature (verifyKey)
	set    atomic.Pointer[keySet]
}

// keySet is one version of the JWKS file, with the tokens verified by its keys.
type keySet struct {
	sum   [sha256.Size]byte
	keys  map[string]key
	cache *cache // nil: no cache
}

// New returns a Verifier of cfg.JWKSFile, or an error for a missing field or unusable file.
func New(cfg Config) (*Verifier, error) {
	switch {
	case cfg.JWKSFile == "":
		return nil, errors.New("authn: no JWKS file")
	case cfg.Audience == "":
		return nil, errors.New("authn: no audience")
	case cfg.Issuer == "":
		return nil, errors.New("authn: no issuer")
	case cfg.Leeway < 0:
		return nil, errors.New("authn: negative leeway")
	}
	if cfg.Reload <= 0 {
		cfg.Reload = DefaultReload
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v := &Verifier{cfg: cfg,
		parser: jwt.NewParser(jwt.WithValidMethods([]string{AlgEdDSA, AlgES256, AlgRS256}), jwt.WithoutClaimsValidation()),
		claims: jwt.NewValidator(jwt.WithAudience(cfg.Audience), jwt.WithIssuer(cfg.Issuer),
			jwt.WithLeeway(cfg.Leeway), jwt.WithExpirationRequired(), jwt.WithTimeFunc(cfg.Now)),
	}
	if _, err := v.Reload(); err != nil {
		return nil, err
	}
	return v, nil
}

// Reload rereads the JWKS file and reports whether it changed; on error the keys stay.
func (v *Verifier) Reload() (changed bool, err error) {
	data, err := os.ReadFile(v.cfg.JWKSFile)
	if err != nil {
		return false, fmt.Errorf("authn: %w", err)
	}
	sum := sha256.Sum256(data)
	if old := v.set.Load(); old != nil && old.sum == sum {
		return false, nil
	}
	keys, err := parseJWKS(data)
	if err != nil {
		return false, fmt.Errorf("authn: %s: %w", v.cfg.JWKSFile, err)
	}
	s := &keySet{sum: sum, keys: keys}
	if v.cfg.CacheSize > 0 {
		s.cache = newCache(v.cfg.CacheSize)
	}
	v.set.Store(s)
	kids := make([]string, 0, len(keys))
	for kid := range keys {
		kids = append(kids, kid)
	}
	v.cfg.Logger.Info("buyer token keys loaded", "file", v.cfg.JWKSFile, "kids", kids)
	return true, nil
}

// Run calls Reload every Config.Reload until ctx ends, logging errors.
func (v *Verifier) Run(ctx context.Context) {
	t := time.NewTicker(v.cfg.Reload)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := v.Reload(); err != nil {
				v.cfg.Logger.Error("buyer token keys not reloaded", "err", err)
			}
		}
	}
}

// Verify returns the user id (sub) a token proves, or ErrInvalidToken.
func (v *Verifier) Verify(token string) (int64, error) {
	if len(token) > maxTokenLen {
		return 0, invalid("longer than %d bytes", maxTokenLen)
	}
	set := v.set.Load()
	var sum [sha256.Size]byte
	now := v.cfg.Now()
	if set.cache != nil {
		sum = sha256.Sum256([]byte(token))
		if user, ok := set.cache.get(sum, now); ok {
			return user, nil
		}
	}
	var claims jwt.RegisteredClaims
	var user int64
	_, err := v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		return v.verifyKey(set, t, &claims, &user)
	})
	if err != nil {
		return 0, reason(err)
	}
	if set.cache != nil && (claims.NotBefore == nil || !now.Before(claims.NotBefore.Time)) {
		set.cache.put(sum, user, claims.ExpiresAt.Time)
	}
	return user, nil
}

// verifyKey is the Keyfunc of Verify: it checks the claims golang-jwt decoded, then sub,
// which it reads into user, before it returns the key whose signature check follows, so
// that a token refused for its claims costs no signature check.
func (v *Verifier) verifyKey(set *keySet, t *jwt.Token, claims *jwt.RegisteredClaims, user *int64) (any, error) {
	if err := v.claims.Validate(claims); err != nil {
		return nil, err
	}
	var err error
	*user, err = strconv.ParseInt(claims.Subject, 10, 64)
	if err != nil || *user <= 0 || strconv.FormatInt(*user, 10) != claims.Subject {
		return nil, errBadSubject
	}
	kid, _ := t.Header["kid"].(string)
	k, ok := set.keys[kid]
	if !ok && kid == "" && len(set.keys) == 1 {
		for _, only := range set.keys {
			k, ok = only, true
		}
	}
	switch {
	case !ok:
		return nil, errUnknownKey
	case t.Method.Alg() != k.alg:
		return nil, errWrongAlg
	}
	return k.pub, nil
}

var (
	errBadSubject = errors.New("sub is not a user id (a positive integer)")
	errUnknownKey = errors.New("no key with the token's kid")
	errWrongAlg   = errors.New("the token's alg is not its key's")
)

// reason turns a parse error into ErrInvalidToken with a reason for the client.
func reason(err error) error {
	for _, r := range []struct {
		err error
		why string
	}{
		{jwt.ErrTokenMalformed, "malformed"},
		{errBadSubject, errBadSubject.Error()},
		{errUnknownKey, "signed by an unknown key"},
		{errWrongAlg, "its alg does not match its key"},
		{jwt.ErrTokenExpired, "expired"},
		{jwt.ErrTokenNotValidYet, "not valid yet"},
		{jwt.ErrTokenInvalidAudience, "for another audience"},
		{jwt.ErrTokenInvalidIssuer, "from another issuer"},
		{jwt.ErrTokenRequiredClaimMissing, "without a required claim (exp, aud and iss are required)"},
	} {
		if errors.Is(err, r.err) {
			return invalid("%s", r.why)
		}
	}
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method") {
		return invalid("alg not accepted: only %s, %s and %s", AlgEdDSA, AlgES256, AlgRS256)
	}
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) {
		return invalid("bad signature")
	}
	return invalid("%s", "not accepted")
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

// BearerToken returns the token of an Authorization header, or ErrNoToken for none and
// ErrInvalidToken for an empty one.
func BearerToken(header string) (string, error) {
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", ErrNoToken
	}
	token = strings.TrimLeft(token, " ")
	if token == "" {
		return "", invalid("empty")
	}
	return token, nil
}
