package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/envflag"
)

// authnConfig is buyer identity's part of the configuration (AUTH_*): off unless jwksFile
// is set (docs/api.md#buyer-identity).
type authnConfig struct {
	jwksFile  string
	audience  string
	issuer    string
	clockSkew time.Duration
	reload    time.Duration
	cache     int
}

// addAuthnFlags declares the AUTH_* settings on e, into a.
func addAuthnFlags(e envflag.Set, a *authnConfig) {
	e.StringVar(&a.jwksFile, "auth-jwks-file", "AUTH_JWKS_FILE", "",
		"JWK Set `file` of the public keys that sign buyers' bearer tokens; set, the purchase, bundle, order lookup, pay and cancel routes need one and act for its sub; empty: buyer identity off (env AUTH_JWKS_FILE)")
	e.StringVar(&a.audience, "auth-audience", "AUTH_AUDIENCE", "", "the aud a buyer's token must name; required with AUTH_JWKS_FILE (env AUTH_AUDIENCE)")
	e.StringVar(&a.issuer, "auth-issuer", "AUTH_ISSUER", "", "the iss a buyer's token must have; required with AUTH_JWKS_FILE (env AUTH_ISSUER)")
	e.DurationVar(&a.clockSkew, "auth-clock-skew", "AUTH_CLOCK_SKEW", authn.DefaultLeeway, "clock skew allowed on a buyer token's exp and nbf, 0 to 5m (env AUTH_CLOCK_SKEW)")
	e.DurationVar(&a.reload, "auth-reload", "AUTH_RELOAD", authn.DefaultReload, "how often AUTH_JWKS_FILE is reread: keys added or removed take effect without a restart (env AUTH_RELOAD)")
	e.IntVar(&a.cache, "auth-cache", "AUTH_CACHE", authn.DefaultCacheSize, "verified buyer tokens remembered (by their hash, never past exp); 0: none, every request checks its signature (env AUTH_CACHE)")
}

// check returns an error for each AUTH_* setting that is out of range or that has no effect
// without the others.
func (a authnConfig) check() []error {
	var errs []error
	switch {
	case a.jwksFile == "" && (a.audience != "" || a.issuer != ""):
		errs = append(errs, errors.New("AUTH_AUDIENCE and AUTH_ISSUER need AUTH_JWKS_FILE: set it to turn buyer identity on, or unset them"))
	case a.jwksFile != "" && (a.audience == "" || a.issuer == ""):
		errs = append(errs, errors.New("AUTH_JWKS_FILE needs AUTH_AUDIENCE and AUTH_ISSUER: the aud and iss a buyer's token must carry"))
	}
	if a.clockSkew < 0 || a.clockSkew > 5*time.Minute {
		errs = append(errs, fmt.Errorf("AUTH_CLOCK_SKEW %s: want 0 to 5m", a.clockSkew))
	}
	if a.reload < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("AUTH_RELOAD %s: want at least 100ms", a.reload))
	}
	if a.cache < 0 || a.cache > 10_000_000 {
		errs = append(errs, fmt.Errorf("AUTH_CACHE %d: want 0 to 10000000", a.cache))
	}
	return errs
}

// verifier returns the buyer token verifier, nil with buyer identity off, or an error when
// AUTH_JWKS_FILE cannot be read or holds no valid key set.
func (a authnConfig) verifier(log *slog.Logger) (*authn.Verifier, error) {
	if a.jwksFile == "" {
		log.Info("buyer identity off: the buyer is the request's user_id (AUTH_JWKS_FILE is empty)")
		return nil, nil
	}
	cache := a.cache
	if cache == 0 {
		cache = -1 // authn: none
	}
	v, err := authn.New(authn.Config{JWKSFile: a.jwksFile, Audience: a.audience, Issuer: a.issuer,
		Leeway: a.clockSkew, Reload: a.reload, CacheSize: cache, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("AUTH_JWKS_FILE: %w", err)
	}
	log.Info("buyer identity on", "jwks_file", a.jwksFile, "audience", a.audience, "issuer", a.issuer,
		"clock_skew", a.clockSkew.String(), "cache", a.cache)
	return v, nil
}
