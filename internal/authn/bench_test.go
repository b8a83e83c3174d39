package authn_test

import (
	"testing"

	"github.com/seckill/seckill/internal/authn"
)

// BenchmarkVerify: one token verified, per algorithm, with its signature checked every time
// (nocache) and remembered (cache).
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
		}
	}
}
