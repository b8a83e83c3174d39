// Package inventory owns products and their stock: creating and reading products, the
// conditional stock updates every strategy builds on, and the sold-out flag that turns
// buyers away without touching PostgreSQL. It knows nothing of orders.
package inventory

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors returned by this package. Compare with errors.Is.
var (
	ErrNotFound = errors.New("inventory: product not found")
	ErrSoldOut  = errors.New("inventory: sold out")
	ErrInvalid  = errors.New("inventory: invalid product")
	// ErrFenced: the write's lock fence is not above the product's; the lock was lost.
	ErrFenced = errors.New("inventory: stale lock fence")
)

// Strategy names how purchases of a product are serialised.
type Strategy string

// The strategies, chosen per product.
const (
	StrategyDlock       Strategy = "dlock"       // Redis lock (internal/dlock) + fenced conditional update
	StrategyPessimistic Strategy = "pessimistic" // SELECT ... FOR UPDATE
	StrategyOptimistic  Strategy = "optimistic"  // UPDATE ... WHERE stock > 0
	StrategyRedis       Strategy = "redis"       // atomic Lua gate in Redis, then PostgreSQL
	StrategyQueue       Strategy = "queue"       // Lua admission onto a Redis Stream, written by consumers
)

// Strategies lists the production strategies, the default first.
var Strategies = []Strategy{StrategyDlock, StrategyPessimistic, StrategyOptimistic, StrategyRedis, StrategyQueue}

// Limits on new products.
const (
	MaxNameLen = 200
	MaxStock   = 100_000_000
	MaxThinkMS = 10_000
	// MaxPayWithinMS is the longest payment window: a day.
	MaxPayWithinMS = 86_400_000
)

// Product is a row of the products table.
type Product struct {
	ID           int64
	Name         string
	Stock        int
	InitialStock int
	Strategy     Strategy
	ThinkMS      int
	LabLock      string // the name of the lab's lock (the lab strategy only; internal/lab owns the names)
	LeaseMS      int    // the lab lock's lease; 0: the service's lock TTL (the lab strategy only)
	Fair         bool   // buyers served in the order they asked, across processes (StrategyDlock only)
	// PayWithinMS is the reservations' payment window; 0 means every order is paid at once.
	PayWithinMS int
	// StartsAt and EndsAt bound the sale window (nil: no bound); see OnSale.
	StartsAt *time.Time
	EndsAt   *time.Time
	PausedAt *time.Time // when the merchant paused the sale (nil: not paused); see Paused
	// LineRate and LineWindowMS are the product's pre-queue (0: none); see Line.
	LineRate     int
	LineWindowMS int
	Fence        int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// TableName maps Product to its table for GORM.
func (Product) TableName() string { return "products" }

// Sold is how many units have been sold.
func (p Product) Sold() int { return p.InitialStock - p.Stock }

// Lease is the lab lock's lease, or 0 for the service's lock TTL.
func (p Product) Lease() time.Duration { return time.Duration(p.LeaseMS) * time.Millisecond }

// Think is the teaching pause between reading and writing stock.
func (p Product) Think() time.Duration { return time.Duration(p.ThinkMS) * time.Millisecond }

// NewProduct is what a caller supplies to create a product.
type NewProduct struct {
	Name     string
	Stock    int
	Strategy Strategy // empty means StrategyDlock
	ThinkMS  int
	LabLock  string // empty but for a plugged strategy that asks for it (see Store.Plug)
	LeaseMS  int    // 0 but for a plugged strategy that asks for it (see Store.Plug)
	Fair     bool   // StrategyDlock only: a fair lock (internal/dlock's ObtainFair)
	// PayWithinMS (0 to MaxPayWithinMS) is the payment window, if Reservable.
	PayWithinMS int
	// StartsAt and EndsAt (optional) bound the sale window; EndsAt must be after StartsAt.
	StartsAt *time.Time
	EndsAt   *time.Time
	// Line (optional, needs StartsAt) gives early buyers a drawn place (see Line).
	Line *LineSpec
}

// Validate returns np's first problem as a production product, wrapping ErrInvalid.
func (np *NewProduct) Validate() error {
	if np.Strategy == "" {
		np.Strategy = StrategyDlock
	}
	switch {
	case !slices.Contains(Strategies, np.Strategy):
		return fmt.Errorf("%w: strategy must be one of %v", ErrInvalid, Strategies)
	case np.LabLock != "" || np.LeaseMS != 0:
		return fmt.Errorf("%w: lock and lease_ms are for the lab's products only", ErrInvalid)
	}
	return np.validateCommon()
}

// validateCommon checks the fields every product has, whatever its strategy.
func (np *NewProduct) validateCommon() error {
	switch {
	case np.Name == "" || utf8.RuneCountInString(np.Name) > MaxNameLen || !utf8.ValidString(np.Name) ||
		strings.ContainsRune(np.Name, 0):
		return fmt.Errorf("%w: name must be 1 to %d characters of valid UTF-8, without NUL", ErrInvalid, MaxNameLen)
	case np.Stock < 0 || np.Stock > MaxStock:
		return fmt.Errorf("%w: stock must be between 0 and %d", ErrInvalid, MaxStock)
	case np.ThinkMS < 0 || np.ThinkMS > MaxThinkMS:
		return fmt.Errorf("%w: think_ms must be between 0 and %d", ErrInvalid, MaxThinkMS)
	case np.Fair && np.Strategy != StrategyDlock:
		return fmt.Errorf("%w: fair is for strategy %s only", ErrInvalid, StrategyDlock)
	case np.PayWithinMS < 0 || np.PayWithinMS > MaxPayWithinMS:
		return fmt.Errorf("%w: pay_within_ms must be between 0 and %d", ErrInvalid, MaxPayWithinMS)
	case np.PayWithinMS > 0 && !np.Strategy.Reservable():
		return fmt.Errorf("%w: pay_within_ms is not for strategy %s, which writes absolute stock values: a unit given back would be a lost update",
			ErrInvalid, np.Strategy)
	case np.StartsAt != nil && np.EndsAt != nil && !np.EndsAt.After(*np.StartsAt):
		return fmt.Errorf("%w: ends_at (%s) must be after starts_at (%s)", ErrInvalid,
			np.EndsAt.Format(time.RFC3339Nano), np.StartsAt.Format(time.RFC3339Nano))
	}
	return np.validateLine()
}

// Reservable reports whether s's products may have a payment window: production strategies.
func (s Strategy) Reservable() bool { return slices.Contains(Strategies, s) }
