package authn

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"
)

// cacheShards splits the cache so that buyers on many cores rarely wait for one lock.
const cacheShards = 16

// cache remembers verified tokens by their SHA-256: the user each proves, until its exp.
// It holds at most its size; a full shard forgets an arbitrary entry (Go's map order) for
// each new one. It is safe for concurrent use.
type cache struct {
	perShard int
	shards   [cacheShards]struct {
		mu sync.Mutex
		m  map[[sha256.Size]byte]cached
	}
}

type cached struct {
	user int64
	exp  time.Time
}

func newCache(size int) *cache {
	c := &cache{perShard: max(1, size/cacheShards)}
	for i := range c.shards {
		c.shards[i].m = make(map[[sha256.Size]byte]cached)
	}
	return c
}

// get returns the user of the token whose hash is sum, if it is remembered and now is
// before its exp (the cache allows no clock skew: a token past its exp is verified again).
func (c *cache) get(sum [sha256.Size]byte, now time.Time) (int64, bool) {
	s := &c.shards[binary.LittleEndian.Uint64(sum[:8])%cacheShards]
	s.mu.Lock()
	e, ok := s.m[sum]
	if ok && !now.Before(e.exp) {
		delete(s.m, sum)
		ok = false
	}
	s.mu.Unlock()
	return e.user, ok
}

// put remembers that the token whose hash is sum proves user until exp.
func (c *cache) put(sum [sha256.Size]byte, user int64, exp time.Time) {
	s := &c.shards[binary.LittleEndian.Uint64(sum[:8])%cacheShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[sum]; !ok && len(s.m) >= c.perShard {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[sum] = cached{user: user, exp: exp}
}

// len is how many tokens are remembered.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		c.shards[i].mu.Lock()
		n += len(c.shards[i].m)
		c.shards[i].mu.Unlock()
	}
	return n
}
