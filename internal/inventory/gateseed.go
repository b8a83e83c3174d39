package inventory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// SeedMode says whether a seeding may overwrite a gate that exists.
type SeedMode string

// The seeding modes.
const (
	// SeedInit creates the gate unless it exists.
	SeedInit SeedMode = "init"
	// SeedSync overwrites the gate.
	SeedSync SeedMode = "sync"
)

// seedingTTL bounds how long a seeding's half-loaded set may stay in Redis if its process
// dies mid-way; each chunk renews it.
const seedingTTL = 5 * time.Minute

// addBatch is the most members one SADD of a seeding carries. Redis runs one command at a
// time: 10,000 members took 6-8 ms of Redis's time here (BenchmarkSeedGate), 1,000 take
// well under one. Each goes out on its own round trip (a pipeline would run back to back).
const addBatch = 1000

// Seeding loads a gate: Add the buyers in chunks, then Publish the stock. Not safe for concurrent use.
type Seeding struct {
	g        *Gate
	id       int64
	tmp      string
	returned []any // order ids: see Returned
	restocks []any // restock keys: see Restocked
	at       int64 // PostgreSQL's time of the snapshot, in ms: see At
}

// StartSeeding begins loading the gate of product id.
func (g *Gate) StartSeeding(id int64) *Seeding {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Seeding{g: g, id: id, tmp: g.keys.GateSeed(id, hex.EncodeToString(b))}
}

// Add loads one chunk of buyers' user ids.
func (s *Seeding) Add(ctx context.Context, users []int64) error {
	members := make([]any, 0, min(len(users), addBatch))
	for start := 0; start < len(users); start += addBatch {
		members = members[:0]
		for _, u := range users[start:min(start+addBatch, len(users))] {
			members = append(members, u)
		}
		if err := s.g.rdb.SAdd(ctx, s.tmp, members...).Err(); err != nil {
			return fmt.Errorf("seed gate of product %d: %w", s.id, err)
		}
	}
	if err := s.g.rdb.PExpire(ctx, s.tmp, seedingTTL).Err(); err != nil {
		return fmt.Errorf("seed gate of product %d: %w", s.id, err)
	}
	return nil
}

// Returned names ended orders whose units the seeded stock counts; Publish marks them returned
// so that Gate.Return and Gate.Recover skip them.
func (s *Seeding) Returned(orders []int64) {
	for _, o := range orders {
		s.returned = append(s.returned, o)
	}
}

// Restocked names restocks whose units the seeded stock counts; Publish marks them counted so
// that Gate.Restock and Gate.RecoverRestocks skip them.
func (s *Seeding) Restocked(keys []string) {
	for _, k := range keys {
		s.restocks = append(s.restocks, k)
	}
}

// At sets the snapshot's PostgreSQL time, which Publish stamps (default 0: verification redoes all).
func (s *Seeding) At(t time.Time) { s.at = t.UnixMilli() }

// Publish makes the loaded buyers and stock the gate and reports whether it was written
// (SeedInit keeps an existing gate).
func (s *Seeding) Publish(ctx context.Context, mode SeedMode, stock int) (written bool, err error) {
	keys := append(s.g.gateKeys(s.id), s.tmp, s.g.keys.GateLate(s.id), s.g.keys.GateReturned(s.id), s.g.keys.GateStamp(s.id),
		s.g.keys.GateRestocked(s.id))
	args := append(append([]any{string(mode), stock, s.at, len(s.returned)}, s.returned...), s.restocks...)
	res, err := publishScript.Run(ctx, s.g.rdb, keys, args...).Int()
	if err != nil {
		return false, fmt.Errorf("%s gate of product %d: %w", mode, s.id, err)
	}
	return res == 1, nil
}

// Abort drops what a seeding loaded, when it cannot finish.
func (s *Seeding) Abort(ctx context.Context) {
	_ = s.g.rdb.Unlink(ctx, s.tmp).Err() // best effort: the set expires anyway
}
