package authn_test

import (
	"crypto/ed25519"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/golang-jwt/jwt/v5"

	"github.com/seckill/seckill/internal/authn"
)

// BenchmarkVerify: one token verified, per algorithm, with its signature checked every time
// (nocache) and remembered (cache), and an expired token refused (expired).
func BenchmarkVerify(b *testing.B) {
	for _, alg := range []string{authn.AlgEdDSA, authn.AlgES256, authn.AlgRS256} {
		priv, pub, err := authn.GenerateKey(alg)
		if err != nil {
			b.Fatal(err)
		}
		file := b.TempDir() + "/jwks.json"
		writeJWKS(b, file, pub)
		s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: aud, Issuer: iss})
		if err != nil {
			b.Fatal(err)
		}
		tok, _, _ := s.Token(7)
		expired, _, _ := s.Mint(jwt.RegisteredClaims{Subject: "7", Audience: jwt.ClaimStrings{aud}, Issuer: iss,
			ExpiresAt: jwt.NewNumericDate(time.Now().Add(-time.Hour))})
		for _, c := range []struct {
			name string
			size int
		}{{"nocache", -1}, {"cache", 0}} {
			v, err := authn.New(authn.Config{JWKSFile: file, Audience: aud, Issuer: iss, CacheSize: c.size})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(alg+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := v.Verify(tok); err != nil {
						b.Fatal(err)
					}
				}
			})
			if c.size < 0 {
				b.Run(alg+"/expired", func(b *testing.B) { // a refusal, never cached
					for b.Loop() {
						if _, err := v.Verify(expired); err == nil {
							b.Fatal("accepted")
						}
					}
				})
			}
		}
	}
}

// BenchmarkTokenLibraries: the same Ed25519 token parsed, verified and its claims checked by
// golang-jwt (which authn uses) and by go-jose's jwt package (docs/dependencies.md).
func BenchmarkTokenLibraries(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.RegisteredClaims{Subject: "42", Audience: jwt.ClaimStrings{aud},
		Issuer: iss, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)), NotBefore: jwt.NewNumericDate(now)})
	t.Header["kid"] = "k"
	tok, _ := t.SignedString(priv)
	p := jwt.NewParser(jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience(aud), jwt.WithIssuer(iss), jwt.WithExpirationRequired())
	b.Run("golang-jwt", func(b *testing.B) {
		for b.Loop() {
			var c jwt.RegisteredClaims
			if _, err := p.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return pub, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-jose", func(b *testing.B) {
		for b.Loop() {
			t, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
			var c josejwt.Claims
			if err == nil {
				err = t.Claims(pub, &c)
			}
			if err == nil {
				err = c.Validate(josejwt.Expected{AnyAudience: josejwt.Audience{aud}, Issuer: iss, Time: time.Now()})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCacheHitParallel: 4096 remembered tokens verified from every core at once, which
// shows whether the cache's locks make cores wait (run with -cpu 1,2).
func BenchmarkCacheHitParallel(b *testing.B) {
	priv, pub, err := authn.GenerateKey(authn.AlgEdDSA)
	if err != nil {
		b.Fatal(err)
	}
	file := b.TempDir() + "/jwks.json"
	writeJWKS(b, file, pub)
	s, err := authn.NewSigner(authn.SignerConfig{Key: priv, Audience: aud, Issuer: iss})
	if err != nil {
		b.Fatal(err)
	}
	v, err := authn.New(authn.Config{JWKSFile: file, Audience: aud, Issuer: iss})
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]string, 4096)
	for i := range toks {
		toks[i], _, _ = s.Token(int64(i + 1))
		if _, err := v.Verify(toks[i]); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(toks[n.Add(1)%uint64(len(toks))]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
