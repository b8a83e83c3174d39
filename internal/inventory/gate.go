package inventory

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/admit.lua
	admitSrc string
	//go:embed lua/giveback.lua
	giveBackSrc string
	//go:embed lua/seed.lua
	seedSrc string
	//go:embed lua/confirm.lua
	confirmSrc string

	admitScript    = redis.NewScript(admitSrc)
	giveBackScript = redis.NewScript(giveBackSrc)
	seedScript     = redis.NewScript(seedSrc)
	confirmScript  = redis.NewScript(confirmSrc)
)

// ErrGateNotSeeded means the product's gate does not exist in Redis: it was never seeded,
// or Redis lost its data. Seed it from PostgreSQL and try again.
var ErrGateNotSeeded = errors.New("inventory: gate not seeded")

// ErrAlreadyAdmitted means the gate admitted this user for this product before.
var ErrAlreadyAdmitted = errors.New("inventory: user already admitted")

// Gate is the redis strategy's admission control: a stock counter and a set of admitted
// buyers per product in Redis, updated by one Lua script, so at most stock distinct users
// get through without PostgreSQL being touched. It is safe for concurrent use.
type Gate struct {
	rdb  redis.UniversalClient
	keys Keys
}

// NewGate returns a Gate in rdb under keys.
func NewGate(rdb redis.UniversalClient, keys Keys) *Gate { return &Gate{rdb: rdb, keys: keys} }

func (g *Gate) gateKeys(id int64) []string {
	return []string{g.keys.GateStock(id), g.keys.GateBuyers(id)}
}

// Admit takes one unit for user. It returns nil when admitted, ErrSoldOut,
// ErrAlreadyAdmitted, ErrGateNotSeeded, or a Redis error.
func (g *Gate) Admit(ctx context.Context, id, user int64) error {
	res, err := admitScript.Run(ctx, g.rdb, g.gateKeys(id), user).Int()
	if err != nil {
		return fmt.Errorf("gate of product %d: %w", id, err)
	}
	switch res {
	case 1:
		return nil
	case 0:
		return fmt.Errorf("gate of product %d: %w", id, ErrSoldOut)
	case -1:
		return fmt.Errorf("gate of product %d: %w", id, ErrAlreadyAdmitted)
	default:
		return fmt.Errorf("gate of product %d: %w", id, ErrGateNotSeeded)
	}
}

// GiveBack returns the unit of an admitted user whose purchase did not go through.
func (g *Gate) GiveBack(ctx context.Context, id, user int64) error {
	if err := giveBackScript.Run(ctx, g.rdb, g.gateKeys(id), user).Err(); err != nil {
		return fmt.Errorf("give back to gate of product %d: %w", id, err)
	}
	return nil
}

// Confirm records that user's order is committed. It repairs the gate if it was re-seeded
// while the purchase was in flight (see lua/confirm.lua).
func (g *Gate) Confirm(ctx context.Context, id, user int64) error {
	if err := confirmScript.Run(ctx, g.rdb, g.gateKeys(id), user).Err(); err != nil {
		return fmt.Errorf("confirm in gate of product %d: %w", id, err)
	}
	return nil
}

// Seed creates the gate from PostgreSQL's stock and buyers unless it exists.
func (g *Gate) Seed(ctx context.Context, id int64, stock int, buyers []int64) error {
	return g.seed(ctx, "init", id, stock, buyers)
}

// Sync overwrites the gate with PostgreSQL's stock and buyers. Use it when PostgreSQL
// refused a buyer the gate let through: the gate then went wrong (it was re-seeded while
// purchases were in flight), and PostgreSQL is the truth.
func (g *Gate) Sync(ctx context.Context, id int64, stock int, buyers []int64) error {
	return g.seed(ctx, "sync", id, stock, buyers)
}

func (g *Gate) seed(ctx context.Context, mode string, id int64, stock int, buyers []int64) error {
	args := make([]any, 0, 2+len(buyers))
	args = append(args, mode, stock)
	for _, b := range buyers {
		args = append(args, b)
	}
	if err := seedScript.Run(ctx, g.rdb, g.gateKeys(id), args...).Err(); err != nil {
		return fmt.Errorf("%s gate of product %d: %w", mode, id, err)
	}
	return nil
}

// GateState is what the gate holds for a product.
type GateState struct {
	Seeded bool  `json:"seeded"`
	Stock  int64 `json:"stock"`
	Buyers int64 `json:"buyers"`
}

// State reads the gate of product id.
func (g *Gate) State(ctx context.Context, id int64) (GateState, error) {
	var stock *redis.StringCmd
	var buyers *redis.IntCmd
	_, err := g.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		stock = p.Get(ctx, g.keys.GateStock(id))
		buyers = p.SCard(ctx, g.keys.GateBuyers(id))
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return GateState{Buyers: buyers.Val()}, nil
	}
	if err != nil {
		return GateState{}, fmt.Errorf("read gate of product %d: %w", id, err)
	}
	n, err := stock.Int64()
	if err != nil {
		return GateState{}, fmt.Errorf("read gate of product %d: %w", id, err)
	}
	return GateState{Seeded: true, Stock: n, Buyers: buyers.Val()}, nil
}
