package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/loadgen"
)

// signArgs are the flags of buyer tokens: with -sign-key, every request made for a buyer
// carries a token that the buyer's id is the sub of (docs/loadtest.md, "Signed buyers").
type signArgs struct {
	key, kid, aud, iss string
	ttl                time.Duration
}

// signFlags adds -sign-key, -sign-kid, -sign-aud, -sign-iss and -sign-ttl to fs.
func (a *signArgs) signFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.key, "sign-key", "", "private key `file` (PKCS#8 PEM or a private JWK) to sign each buyer's bearer token with, before each attack, "+
		"for an API with buyer identity on (AUTH_JWKS_FILE); empty: no token")
	fs.StringVar(&a.kid, "sign-kid", "", "the tokens' kid; default: the JWK's kid, else the key's RFC 7638 thumbprint (what `loadtest keys` names it)")
	fs.StringVar(&a.aud, "sign-aud", "seckill", "the tokens' aud: the API's AUTH_AUDIENCE")
	fs.StringVar(&a.iss, "sign-iss", "seckill-loadtest", "the tokens' iss: the API's AUTH_ISSUER")
	fs.DurationVar(&a.ttl, "sign-ttl", time.Hour, "how long each token is valid; a buyer's token is minted again when a quarter of it is left")
}

// tokens reads the key and returns the buyers' token source, nil without -sign-key.
func (a signArgs) tokens() (*loadgen.Tokens, error) {
	if a.key == "" {
		return nil, nil
	}
	key, err := os.ReadFile(a.key)
	if err != nil {
		return nil, loadgen.UsageError{Err: fmt.Errorf("-sign-key: %w", err)}
	}
	if a.ttl < time.Minute {
		return nil, loadgen.UsageError{Err: errors.New("-sign-ttl: at least 1m")}
	}
	s, err := authn.NewSigner(authn.SignerConfig{Key: key, Kid: a.kid, Audience: a.aud, Issuer: a.iss, TTL: a.ttl})
	if err != nil {
		return nil, loadgen.UsageError{Err: fmt.Errorf("-sign-key %s: %w", a.key, err)}
	}
	return loadgen.NewTokens(s), nil
}
