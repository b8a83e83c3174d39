package inventory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors of the gate. Compare with errors.Is.
var (
	// ErrGateNotSeeded: the gate is not in Redis; seed it from PostgreSQL and retry.
	ErrGateNotSeeded = errors.New("inventory: gate not seeded")
	// ErrAlreadyAdmitted: the user's purchase was admitted and confirmed before.
	ErrAlreadyAdmitted = errors.New("inventory: user already admitted")
	// ErrAdmissionInFlight: another attempt of the user is admitted, unfinished.
	ErrAdmissionInFlight = errors.New("inventory: another attempt of this user is in flight")
	// ErrAdmissionsExpired: no unit left, but admissions expired; reconcile (Gate.Expired), retry.
	ErrAdmissionsExpired = errors.New("inventory: sold out in the gate, with expired admissions")
	// ErrAdmissionsPending: no unit left, but admissions pending may give theirs back; retry later.
	ErrAdmissionsPending = errors.New("inventory: no unit left in the gate, with admissions pending")
	// ErrGateUnverified: no unit left in an unverified data set; verify (Gate.Verification), retry.
	ErrGateUnverified = errors.New("inventory: sold out in a gate not verified in this Redis data set")
)

// Gate is the redis strategy's per-product stock and buyers in Redis. Safe for concurrent use.
type Gate struct {
	rdb  redis.UniversalClient
	keys Keys
}

// NewGate returns a Gate in rdb under keys.
func NewGate(rdb redis.UniversalClient, keys Keys) *Gate { return &Gate{rdb: rdb, keys: keys} }

func (g *Gate) gateKeys(id int64) []string {
	return []string{g.keys.GateStock(id), g.keys.GateBuyers(id), g.keys.GatePending(id)}
}

// Admit takes one unit for the user's attempt token, pending for ttl; it is idempotent per
// token. Errors: ErrSoldOut, the gate's errors, or a Redis error (admission unknown: GiveBack).
func (g *Gate) Admit(ctx context.Context, id, user int64, token string, ttl time.Duration) error {
	keys := append(g.gateKeys(id), g.keys.GateStamp(id))
	res, err := admitScript.Run(ctx, g.rdb, keys, user, token, ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("gate of product %d: %w", id, err)
	}
	switch res {
	case 1:
		return nil
	case 0:
		return fmt.Errorf("gate of product %d: %w", id, ErrSoldOut)
	case 2:
		return fmt.Errorf("gate of product %d: %w", id, ErrAdmissionsExpired)
	case 3:
		return fmt.Errorf("gate of product %d: %w", id, ErrAdmissionsPending)
	case -1:
		return fmt.Errorf("gate of product %d: %w", id, ErrAlreadyAdmitted)
	case -3:
		return fmt.Errorf("gate of product %d: %w", id, ErrAdmissionInFlight)
	case -4:
		return fmt.Errorf("gate of product %d: %w", id, ErrGateUnverified)
	default:
		return fmt.Errorf("gate of product %d: %w", id, ErrGateNotSeeded)
	}
}

// GiveBack returns the unit of the user's attempt token if it holds the admission.
func (g *Gate) GiveBack(ctx context.Context, id, user int64, token string) error {
	if err := giveBackScript.Run(ctx, g.rdb, g.gateKeys(id), user, token).Err(); err != nil {
		return fmt.Errorf("give back to gate of product %d: %w", id, err)
	}
	return nil
}

// Confirm records that PostgreSQL holds the users' orders; needSync means the gate admitted
// too many: reseed it with SeedSync.
func (g *Gate) Confirm(ctx context.Context, id int64, users ...int64) (needSync bool, err error) {
	if len(users) == 0 {
		return false, nil
	}
	args := make([]any, len(users))
	for i, u := range users {
		args[i] = u
	}
	keys := append(g.gateKeys(id), g.keys.GateLate(id))
	res, err := confirmScript.Run(ctx, g.rdb, keys, append([]any{seedingTTL.Milliseconds()}, args...)...).Int()
	if err != nil {
		return false, fmt.Errorf("confirm in gate of product %d: %w", id, err)
	}
	return res < 0, nil
}

// Pending is an admission PostgreSQL has not confirmed.
type Pending struct {
	User  int64
	Token string
}

// Expired returns up to limit admissions of product id whose time ran out.
func (g *Gate) Expired(ctx context.Context, id int64, limit int) ([]Pending, error) {
	flat, err := expiredScript.Run(ctx, g.rdb, []string{g.keys.GatePending(id)}, limit).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("expired admissions of product %d: %w", id, err)
	}
	out := make([]Pending, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		user, err := strconv.ParseInt(flat[i], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("expired admissions of product %d: user %q: %w", id, flat[i], err)
		}
		out = append(out, Pending{User: user, Token: flat[i+1]})
	}
	return out, nil
}

// GateState is what the gate holds for a product.
type GateState struct {
	Seeded  bool
	Stock   int64
	Buyers  int64
	Pending int64 // admissions PostgreSQL has not confirmed yet
}

// State reads the gate of product id.
func (g *Gate) State(ctx context.Context, id int64) (GateState, error) {
	var (
		stock           *redis.StringCmd
		buyers, pending *redis.IntCmd
	)
	_, err := g.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		stock = p.Get(ctx, g.keys.GateStock(id))
		buyers = p.SCard(ctx, g.keys.GateBuyers(id))
		pending = p.HLen(ctx, g.keys.GatePending(id))
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return GateState{Buyers: buyers.Val(), Pending: pending.Val()}, nil
	}
	if err != nil {
		return GateState{}, fmt.Errorf("read gate of product %d: %w", id, err)
	}
	n, err := stock.Int64()
	if err != nil {
		return GateState{}, fmt.Errorf("read gate of product %d: %w", id, err)
	}
	return GateState{Seeded: true, Stock: n, Buyers: buyers.Val(), Pending: pending.Val()}, nil
}
