package authn

// CacheLen is how many verified tokens v remembers now.
func CacheLen(v *Verifier) int { return v.set.Load().cache.len() }
