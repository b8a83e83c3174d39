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
	// SeedInit creates the gate unless it exists (first use, or Redis lost its data).
	SeedInit SeedMode = "init"
	// SeedSync overwrites the gate: PostgreSQL refused a buyer the gate admitted.
	SeedSync SeedMode = "sync"
)

// seedingTTL bounds how long a seeding's half-loaded set may stay in Redis if its process
// dies mid-way; each chunk renews it.
const seedingTTL = 5 * time.Minute

// addBatch is the most members one SADD of a seeding carries. Redis runs one command at a
// time: 10,000 members took 6-8 ms of Redis's time here (BenchmarkSeedGate), 1,000 take
// well under one. Each goes out on its own round trip (a pipeline would run back to back).
const addBatch = 1000

// Seeding loads a product's gate from PostgreSQL in chunks: Add each chunk of buyers, then
// Publish the stock, which makes the set the gate's in one step, stamped (see Gate.Stamp). Use
// one Seeding from one goroutine.
type Seeding struct {
	g        *Gate
	id       int64
	tmp      string
	returned []any // order ids: see Returned
	at       int64 // PostgreSQL's time of the snapshot, in ms: see At
}

// StartSeeding begins loading the gate of product id.
func (g *Gate) StartSeeding(id int64) *Seeding {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Seeding{g: g, id: id, tmp: g.keys.GateSeed(id, hex.EncodeToString(b))}
}

// Add loads one chunk of buyers (user ids with an order), addBatch members per command.
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

// Returned records orders the seed's snapshot saw ended (expired or cancelled) whose units it
// counts in its stock, and whose return to the gate may still be driven (Gate.Return: it was
// not recorded done) or redone (Gate.Recover: it was recorded lately, see At): the publish
// marks them returned, so that neither counts them twice.
func (s *Seeding) Returned(orders []int64) {
	for _, o := range orders {
		s.returned = append(s.returned, o)
	}
}

// At records PostgreSQL's time of the seed's snapshot: the publish stamps the gate with it
// (see Gate.Stamp). Without it the stamp says 0, which makes a verification redo every return.
func (s *Seeding) At(t time.Time) { s.at = t.UnixMilli() }

// Publish ends the seeding with the product's stock: the loaded buyers and the stock become
// the gate. In SeedInit mode a gate that exists meanwhile is kept; written reports whether
// the gate was written.
func (s *Seeding) Publish(ctx context.Context, mode SeedMode, stock int) (written bool, err error) {
	keys := append(s.g.gateKeys(s.id), s.tmp, s.g.keys.GateLate(s.id), s.g.keys.GateReturned(s.id), s.g.keys.GateStamp(s.id))
	res, err := publishScript.Run(ctx, s.g.rdb, keys, append([]any{string(mode), stock, s.at}, s.returned...)...).Int()
	if err != nil {
		return false, fmt.Errorf("%s gate of product %d: %w", mode, s.id, err)
	}
	return res == 1, nil
}

// Abort drops what a seeding loaded, when it cannot finish.
func (s *Seeding) Abort(ctx context.Context) {
	_ = s.g.rdb.Unlink(ctx, s.tmp).Err() // best effort: the set expires anyway
}
