package loadgen

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/seckill/seckill/internal/authn"
)

// maxPremint bounds the tokens Premint holds (a few hundred bytes each): a run that may ask
// for more buyers has the rest minted as they come, and says so (Tokens.Late).
var maxPremint = 1 << 18

// Tokens gives each buyer's bearer token, preminted or minted on demand. Safe for concurrent use.
type Tokens struct {
	signer *authn.Signer
	now    func() time.Time
	pool   atomic.Pointer[tokenPool] // read without a lock: never changed once stored
	late   atomic.Int64              // tokens minted by Token, outside the pool
	mu     sync.Mutex
	byUser map[int64]token
}

type token struct {
	jwt string
	exp time.Time
	ttl time.Duration
}

// fresh reports whether tok is still good to send at t: more than a quarter of its life left.
func (tok token) fresh(t time.Time) bool { return t.Before(tok.exp.Add(-tok.ttl / 4)) }

// tokenPool holds the tokens of users first, first+1, ...; fresh until the first one's
// freshness ends (minted first, it expires first).
type tokenPool struct {
	first int64
	jwts  []string
	until time.Time
}

func (p *tokenPool) get(user int64, t time.Time) (string, bool) {
	if p == nil || user < p.first || user-p.first >= int64(len(p.jwts)) || !t.Before(p.until) {
		return "", false
	}
	return p.jwts[user-p.first], true
}

// NewTokens returns the Tokens of s.
func NewTokens(s *authn.Signer) *Tokens {
	return &Tokens{signer: s, byUser: map[int64]token{}, now: time.Now}
}

// Token returns user's token, minting one (counted by Late) if none is fresh.
func (t *Tokens) Token(_ context.Context, user int64) (string, error) {
	now := t.now()
	if jwt, ok := t.pool.Load().get(user, now); ok {
		return jwt, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tok, ok := t.byUser[user]; ok && tok.fresh(now) {
		return tok.jwt, nil
	}
	tok, err := t.mint(user)
	if err != nil {
		return "", err
	}
	t.late.Add(1)
	t.byUser[user] = tok
	return tok.jwt, nil
}

func (t *Tokens) mint(user int64) (token, error) {
	jwt, exp, err := t.signer.Token(user)
	return token{jwt: jwt, exp: exp, ttl: time.Until(exp)}, err
}

// Late is how many tokens Token has minted outside the pool; 0 for a nil t.
func (t *Tokens) Late() int64 {
	if t == nil {
		return 0
	}
	return t.late.Load()
}

// Premint mints tokens fresh until until for users first to first+n-1, returning how many.
func (t *Tokens) Premint(ctx context.Context, first int64, n int, until time.Time) (int, error) {
	n = min(n, maxPremint)
	if p := t.pool.Load(); p != nil && p.first == first && len(p.jwts) >= n && until.Before(p.until) {
		return 0, nil
	}
	toks := make([]token, n)
	g, ctx := errgroup.WithContext(ctx)
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		g.Go(func() error {
			for i := w; i < n; i += workers {
				if err := ctx.Err(); err != nil {
					return err
				}
				var err error
				if toks[i], err = t.mint(first + int64(i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	p := &tokenPool{first: first, jwts: make([]string, n), until: time.Unix(math.MaxInt32, 0)}
	for i, tok := range toks {
		p.jwts[i] = tok.jwt
		if end := tok.exp.Add(-tok.ttl / 4); end.Before(p.until) {
			p.until = end
		}
	}
	t.pool.Store(p)
	return n, nil
}

// maxBuyers bounds the buyers one attack of c asks tokens for: each request brings at most
// one new buyer, so at most Requests, and for a paced run the requests due by Duration.
func (c *Config) maxBuyers() int {
	n := c.Requests
	if c.model() == ModelOpen || c.Rate > 0 {
		n = min(n, uint64(newSchedule(float64(c.Rate), c.Stages).count(c.Duration))+1)
	}
	return int(min(n, uint64(maxPremint)))
}

// premint fills the token pool for the next attack (Tokens.Premint) before it starts, so
// that the load generator spends the attack sending, not signing: a signature costs about
// what the API spends on a sold-out answer (docs/deployment.md). It returns a function that
// counts, and reports on stderr, the tokens minted after it: during the attack.
func (s *session) premint(ctx context.Context, name string) (late func() int64, err error) {
	t := s.cfg.Deploy.Tokens
	if t == nil {
		return func() int64 { return 0 }, nil
	}
	began := time.Now()
	n, err := t.Premint(ctx, s.cfg.FirstUser, s.cfg.maxBuyers(), began.Add(s.cfg.Duration+time.Minute))
	if err != nil {
		return nil, fmt.Errorf("premint buyer tokens: %w", err)
	}
	if n > 0 {
		fmt.Fprintf(s.stderr, "[%s] minted %d buyers' tokens in %s, before the attack\n", name, n, time.Since(began).Round(time.Millisecond))
	}
	before := t.Late()
	return func() int64 {
		d := t.Late() - before
		if d > 0 {
			fmt.Fprintf(s.stderr, "[%s] %d buyers' tokens were minted during the attack, beyond the %d minted before it\n", name, d, s.cfg.maxBuyers())
		}
		return d
	}, nil
}
