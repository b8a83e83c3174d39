package authn

// CacheLen is how many verified tokens v remembers now.
func CacheLen(v *Verifier) int { return v.set.Load().cache.len() }

// ThumbprintOfJWK is the Thumbprint of the key of a public JWK, read as a JWKS's key is.
func ThumbprintOfJWK(jwk []byte) (string, error) {
	keys, err := parseJWKS([]byte(`{"keys":[` + string(jwk) + `]}`))
	if err != nil {
		return "", err
	}
	for _, k := range keys {
		return Thumbprint(k.pub)
	}
	return "", nil
}
