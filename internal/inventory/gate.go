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
	// ErrGateNotSeeded means the product's gate does not exist in Redis: it was never
	// seeded, or Redis lost its data. Seed it from PostgreSQL and try again.
	ErrGateNotSeeded = errors.New("inventory: gate not seeded")
	// ErrAlreadyAdmitted means the gate admitted this user for this product before and
	// PostgreSQL confirmed the purchase.
	ErrAlreadyAdmitted = errors.New("inventory: user already admitted")
	// ErrAdmissionInFlight means another purchase attempt of this user is admitted and not
	// finished yet.
	ErrAdmissionInFlight = errors.New("inventory: another attempt of this user is in flight")
	// ErrAdmissionsExpired means the gate has no unit left but holds admissions whose time
	// ran out: reconcile them with PostgreSQL (Gate.Expired), then try again.
	ErrAdmissionsExpired = errors.New("inventory: sold out in the gate, with expired admissions")
	// ErrAdmissionsPending means the gate has no unit left but holds admissions of purchases
	// that have not ended: not sold out yet, since one of them may give its unit back. Try
	// again later.
	ErrAdmissionsPending = errors.New("inventory: no unit left in the gate, with admissions pending")
	// ErrGateUnverified means the gate has no unit left in a Redis data set it has not agreed
	// with PostgreSQL in: verify it (Gate.Verification, Recover, Stamp), then try again. See
	// docs/strategies.md#a-gate-from-an-older-data-set.
	ErrGateUnverified = errors.New("inventory: sold out in a gate not verified in this Redis data set")
)

// Gate is the redis strategy's admission control in Redis: per product, a stock counter,
// the admitted buyers and the unconfirmed admissions, each carrying its attempt's token. It is
// safe for concurrent use. See docs/strategies.md#the-redis-gate-under-faults.
type Gate struct {
	rdb  redis.UniversalClient
	keys Keys
}

// NewGate returns a Gate in rdb under keys.
func NewGate(rdb redis.UniversalClient, keys Keys) *Gate { return &Gate{rdb: rdb, keys: keys} }

func (g *Gate) gateKeys(id int64) []string {
	return []string{g.keys.GateStock(id), g.keys.GateBuyers(id), g.keys.GatePending(id)}
}

// Admit takes one unit for user's purchase attempt token, pending for ttl. Calling it again
// with the same token admits again without taking another unit. It returns nil when
// admitted, ErrSoldOut, ErrAdmissionsExpired, ErrAdmissionsPending, ErrAlreadyAdmitted, ErrAdmissionInFlight,
// ErrGateNotSeeded, ErrGateUnverified, or a Redis error (the admission may then have happened:
// give it back).
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

// GiveBack returns the unit of user's attempt token, whose purchase wrote nothing, if that
// attempt holds the admission.
func (g *Gate) GiveBack(ctx context.Context, id, user int64, token string) error {
	if err := giveBackScript.Run(ctx, g.rdb, g.gateKeys(id), user, token).Err(); err != nil {
		return fmt.Errorf("give back to gate of product %d: %w", id, err)
	}
	return nil
}

// Confirm records that PostgreSQL holds the orders of users (one buyer, or a batch's buyers,
// in one round trip). It repairs the gate if it was re-seeded while the purchases were in
// flight (see lua/confirm.lua), and reports needSync when the gate had no unit left for that:
// it admitted too many, sync it.
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
