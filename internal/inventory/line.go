package inventory

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors of a product's line (its pre-queue), held by a *LineError but ErrNoLine.
var (
	// ErrNotYourTurn means the buyer's place is not called yet (or not drawn: before the start).
	ErrNotYourTurn = errors.New("inventory: not your turn in the line")
	// ErrPlaceExpired means the buyer's place was called and its window passed.
	ErrPlaceExpired = errors.New("inventory: place in the line expired")
	// ErrNoLine means the product has no line.
	ErrNoLine = errors.New("inventory: product has no line")
)

// Limits and defaults of a line (see LineSpec).
const (
	MaxLineRate         = 1_000_000
	MinLineWindowMS     = 1_000
	MaxLineWindowMS     = 3_600_000
	DefaultLineWindowMS = 30_000
)

// DefaultLineRates is the rate a line calls places at when its LineSpec gives none, by
// strategy: the orders a second `make demo` measured, rounded down (docs/api.md#the-line-before-the-start).
// A strategy not listed (the lab's) gets 100.
var DefaultLineRates = map[Strategy]int{
	StrategyDlock: 1000, StrategyPessimistic: 100, StrategyOptimistic: 300, StrategyRedis: 1000, StrategyQueue: 1000,
}

// LineSpec is a product's pre-queue as asked at creation: Rate places called a second
// (0: DefaultLineRates) and each call valid WindowMS (0: DefaultLineWindowMS).
type LineSpec struct {
	Rate     int
	WindowMS int
}

func (l *LineSpec) rate() int {
	if l == nil {
		return 0
	}
	return l.Rate
}

func (l *LineSpec) windowMS() int {
	if l == nil {
		return 0
	}
	return l.WindowMS
}

// validateLine fills np.Line's defaults and checks it; a line needs a start.
func (np *NewProduct) validateLine() error {
	l := np.Line
	if l == nil {
		return nil
	}
	if l.Rate == 0 {
		l.Rate = DefaultLineRates[np.Strategy]
		if l.Rate == 0 {
			l.Rate = 100
		}
	}
	if l.WindowMS == 0 {
		l.WindowMS = DefaultLineWindowMS
	}
	switch {
	case np.StartsAt == nil:
		return fmt.Errorf("%w: line needs starts_at: its places are drawn at the start", ErrInvalid)
	case l.Rate < 0 || l.Rate > MaxLineRate:
		return fmt.Errorf("%w: line.rate must be between 1 and %d (0: the strategy's default)", ErrInvalid, MaxLineRate)
	case l.WindowMS < MinLineWindowMS || l.WindowMS > MaxLineWindowMS:
		return fmt.Errorf("%w: line.window_ms must be between %d and %d (0: %d)", ErrInvalid, MinLineWindowMS, MaxLineWindowMS, DefaultLineWindowMS)
	}
	return nil
}

// HasLine reports whether p has a line.
func (p Product) HasLine() bool { return p.LineRate > 0 }

// LineBurst is how many places of p's line are called at the start: one second's worth.
func (p Product) LineBurst() int { return p.LineRate }

// PlaceState is where a buyer stands in a line.
type PlaceState int

// The states of a place.
const (
	NotInLine PlaceState = iota
	Waiting
	Called
	Expired
)

var placeStates = [...]string{"not_in_line", "waiting", "called", "expired"}

func (s PlaceState) String() string { return placeStates[s] }

// Place is a buyer's place in a product's line, as Redis's clock saw it at Now.
type Place struct {
	State PlaceState
	// Rank is the place's 0-based rank, -1 before the start (drawn at the start) or not in line.
	Rank int64
	// Head is how many places have been called (before the start: 0).
	Head     int64
	CalledAt time.Time // when the place is or was called; before the start, the start
	Until    time.Time // when the call ends (zero before the start)
	Now      time.Time
}

// Drawn reports whether the place's rank is known: from the start on.
func (pl Place) Drawn() bool { return pl.Rank >= 0 }

// LineError matches ErrNotYourTurn or ErrPlaceExpired and holds the place that refused.
type LineError struct {
	Product int64
	Err     error
	Place   Place
}

func (e *LineError) Error() string {
	return fmt.Sprintf("product %d: %v (rank %d, head %d)", e.Product, e.Err, e.Place.Rank, e.Place.Head)
}

// Unwrap makes a *LineError match its Err.
func (e *LineError) Unwrap() error { return e.Err }

// Line is the products' pre-queues in Redis: one sorted set per product, each step one
// script on Redis's clock. Safe for concurrent use, from any number of processes.
type Line struct {
	rdb  redis.UniversalClient
	keys Keys
}

// NewLine returns the lines in rdb under keys.
func NewLine(rdb redis.UniversalClient, keys Keys) *Line { return &Line{rdb: rdb, keys: keys} }

// Join gives user a place in p's line unless it has one, and returns it. Errors: ErrNoLine,
// or Redis's.
func (l *Line) Join(ctx context.Context, p Product, user int64) (Place, error) {
	return l.step(ctx, p, user, "join")
}

// Peek returns user's place in p's line, joining nothing. Errors: ErrNoLine, or Redis's.
func (l *Line) Peek(ctx context.Context, p Product, user int64) (Place, error) {
	return l.step(ctx, p, user, "peek")
}

// Admit returns nil if user's place in p's line is called now, joining the line first if
// user has no place. Otherwise a *LineError (ErrNotYourTurn, ErrPlaceExpired), or Redis's.
func (l *Line) Admit(ctx context.Context, p Product, user int64) error {
	pl, err := l.Join(ctx, p, user)
	switch {
	case err != nil:
		return err
	case pl.State == Called:
		return nil
	case pl.State == Expired:
		return &LineError{Product: p.ID, Err: ErrPlaceExpired, Place: pl}
	}
	return &LineError{Product: p.ID, Err: ErrNotYourTurn, Place: pl}
}

func (l *Line) step(ctx context.Context, p Product, user int64, mode string) (Place, error) {
	if !p.HasLine() {
		return Place{}, fmt.Errorf("product %d: %w", p.ID, ErrNoLine)
	}
	r, err := lineScript.Run(ctx, l.rdb, []string{l.keys.Line(p.ID)}, user, startMS(p), p.LineRate,
		p.LineBurst(), p.LineWindowMS, mode, DrawScore()).Int64Slice()
	if err != nil {
		return Place{}, fmt.Errorf("line of product %d: %w", p.ID, err)
	}
	pl := Place{State: PlaceState(r[0]), Rank: r[1], Head: r[2], Now: time.UnixMilli(r[5])}
	if r[3] > 0 {
		pl.CalledAt = time.UnixMilli(r[3])
	}
	if r[4] > 0 {
		pl.Until = time.UnixMilli(r[4])
	}
	return pl, nil
}

// startMS is p's start in ms since 1970, rounded up: the line never starts before p's sale.
func startMS(p Product) int64 {
	ms := p.StartsAt.UnixMilli()
	if p.StartsAt.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// DrawScore returns a place's score drawn before the start: a uniform random number in
// [0, 1) with 53 random bits, from crypto/rand, formatted to round-trip exactly.
func DrawScore() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's documented guarantee since Go 1.24)
	f := float64(binary.BigEndian.Uint64(b[:])>>11) / (1 << 53)
	return strconv.FormatFloat(f, 'g', -1, 64)
}
