package loadgen

import (
	"context"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/authn"
)

// Tokens mints each buyer's bearer token (sub: the user id) for an API with buyer identity
// on, once per buyer, and again when less than a quarter of its life is left. It is safe
// for concurrent use.
type Tokens struct {
	signer *authn.Signer
	mu     sync.Mutex
	byUser map[int64]token
	now    func() time.Time
}

type token struct {
	jwt string
	exp time.Time
	ttl time.Duration
}

// NewTokens returns the token source of a signer (authn.NewSigner: -sign-key and its
// companions).
func NewTokens(s *authn.Signer) *Tokens {
	return &Tokens{signer: s, byUser: map[int64]token{}, now: time.Now}
}

// Token returns user's token, minting it if it has none or the one it has is near its exp.
func (t *Tokens) Token(_ context.Context, user int64) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tok, ok := t.byUser[user]; ok && t.now().Before(tok.exp.Add(-tok.ttl/4)) {
		return tok.jwt, nil
	}
	jwt, exp, err := t.signer.Token(user)
	if err != nil {
		return "", err
	}
	t.byUser[user] = token{jwt: jwt, exp: exp, ttl: time.Until(exp)}
	return jwt, nil
}
