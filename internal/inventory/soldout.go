package inventory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// SoldOut is the process's cache of sold-out products, leased from Redis. Safe for concurrent use.
type SoldOut struct {
	rdb         redis.UniversalClient
	keys        Keys
	log         *slog.Logger
	conn        *markConn // the connection marks read the stock on
	lease, hold time.Duration
	base        time.Time // the zero of now: time.Since reads the monotonic clock

	local sync.Map   // int64 -> *mark
	mu    sync.Mutex // serialises the changes of local; reads take no lock
	seq   atomic.Uint64
	round atomic.Int64 // Keep's rounds so far: a mark's last use, in those
	tries sync.Map     // int64 -> *atomic.Int64: when Mark last went to Redis (now)

	waitedMu sync.Mutex
	waited   map[string]int64 // ids of holds whose lease this process waited out -> when (now)
}

// SoldOutOptions configure a SoldOut; the zero value means the defaults.
type SoldOutOptions struct {
	// Lease is how long a mark is trusted after Redis confirmed it. Default: 200ms.
	Lease time.Duration
	// Hold is how long after a lift no mark is made. Default: 10s.
	Hold time.Duration
}

// mark is a process's copy of one product's mark.
type mark struct {
	value string       // the mark in Redis: m:<ident>:<token>
	seq   uint64       // its incarnation in this process (see Incarnation)
	from  atomic.Int64 // start of its last confirmation (now): trusted until from + lease
	used  atomic.Int64 // the round of its last use, written only when it changed
}

// NewSoldOut returns a SoldOut sharing marks through rdb.
func NewSoldOut(rdb redis.UniversalClient, products *Store, keys Keys, log *slog.Logger, opts SoldOutOptions) *SoldOut {
	return &SoldOut{rdb: rdb, keys: keys, log: log, conn: &markConn{db: products.db},
		lease: cmp.Or(opts.Lease, 200*time.Millisecond), hold: cmp.Or(opts.Hold, 10*time.Second),
		base: time.Now(), waited: map[string]int64{}}
}

// Lease is how long a mark is trusted after it was last confirmed (SoldOutOptions.Lease).
func (s *SoldOut) Lease() time.Duration { return s.lease }

// Hold is how long after a lift no mark is made (SoldOutOptions.Hold).
func (s *SoldOut) Hold() time.Duration { return s.hold }

func (s *SoldOut) now() int64 { return int64(time.Since(s.base)) }

// Is reports whether product id is known to be sold out: its stock is 0 now.
func (s *SoldOut) Is(id int64) bool {
	_, ok := s.Incarnation(id)
	return ok
}

// Incarnation is Is with the mark's number, which changes with each new mark.
func (s *SoldOut) Incarnation(id int64) (uint64, bool) {
	v, ok := s.local.Load(id)
	if !ok {
		return 0, false
	}
	m := v.(*mark)
	if r := s.round.Load(); m.used.Load() != r {
		m.used.Store(r)
	}
	if s.now()-m.from.Load() >= int64(s.lease) {
		return 0, false
	}
	return m.seq, true
}

// Mark marks the product sold out in every process once PostgreSQL confirms it; best effort.
func (s *SoldOut) Mark(ctx context.Context, id int64) {
	if s.Is(id) || !s.try(id) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	marked, err := s.mark(ctx, id)
	if err != nil {
		s.log.WarnContext(ctx, "sold-out mark not made; buyers will be answered from PostgreSQL", "product_id", id, "err", err)
	}
	if !marked {
		return
	}
	if err := announce(ctx, s.rdb, s.keys.SoldOutChannel(), id); err != nil {
		s.log.WarnContext(ctx, "sharing sold-out mark failed; other processes will find out from PostgreSQL",
			"product_id", id, "err", err)
	}
}

// mark makes the mark (see SoldOut): false when a hold is on or PostgreSQL has stock.
func (s *SoldOut) mark(ctx context.Context, id int64) (bool, error) {
	token := strconv.FormatUint(rand.Uint64(), 36)
	keys := []string{s.keys.SoldOut(id), s.keys.SoldOutHold(id), s.keys.SoldOutIdent(id)}
	from := s.now()
	v, err := soldOutMarkScript.Run(ctx, s.rdb, keys, token, s.hold.Milliseconds()).Text()
	switch {
	case errors.Is(err, redis.Nil): // held
		return false, nil
	case err != nil:
		return false, fmt.Errorf("mark product %d sold out: %w", id, err)
	case v != "t": // marked already
		s.confirm(id, v, from, true)
		return true, nil
	}
	stock, err := s.conn.stock(ctx, id)
	if err != nil || stock != 0 {
		if ferr := soldOutForgetScript.Run(ctx, s.rdb, keys[:1], token).Err(); ferr != nil {
			err = errors.Join(err, ferr) // the tentative value is trusted by nobody anyway
		}
		return false, err
	}
	from = s.now()
	v, err = soldOutPromoteScript.Run(ctx, s.rdb, keys, token).Text()
	switch {
	case errors.Is(err, redis.Nil): // lifted or held meanwhile
		return false, nil
	case err != nil:
		return false, fmt.Errorf("mark product %d sold out: %w", id, err)
	}
	s.confirm(id, v, from, true)
	return true, nil
}

// try reports whether Mark may go to Redis for product id: once a lease at most.
func (s *SoldOut) try(id int64) bool {
	v, ok := s.tries.Load(id)
	if !ok {
		v, _ = s.tries.LoadOrStore(id, new(atomic.Int64))
	}
	last, now := v.(*atomic.Int64).Load(), s.now()+1
	return (last == 0 || now-last >= int64(s.lease)) && v.(*atomic.Int64).CompareAndSwap(last, now)
}

// Lift removes the product's mark in every process and waits out its lease. Return a unit
// only if it returned nil, within Hold; on error retry later.
func (s *SoldOut) Lift(ctx context.Context, id int64) error {
	s.drop(id)
	keys := []string{s.keys.SoldOut(id), s.keys.SoldOutHold(id), s.keys.SoldOutIdent(id)}
	hold, err := soldOutLiftScript.Run(ctx, s.rdb, keys, strconv.FormatUint(rand.Uint64(), 36), s.hold.Milliseconds()).Text()
	if err != nil {
		return fmt.Errorf("lift the sold-out mark of product %d: %w", id, err)
	}
	s.drop(id) // a confirmation may have started before the key went
	if err := announce(ctx, s.rdb, s.keys.SoldOutLiftChannel(), id); err != nil {
		s.log.DebugContext(ctx, "announcing a lift failed; the other processes' marks expire", "product_id", id, "err", err)
	}
	if hold == "" || s.hasWaited(hold) {
		return nil
	}
	t := time.NewTimer(s.lease + s.lease/10 + 5*time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("lift the sold-out mark of product %d: %w", id, context.Cause(ctx))
	case <-t.C:
	}
	s.waitedMu.Lock()
	defer s.waitedMu.Unlock()
	now := s.now()
	for h, at := range s.waited {
		if now-at > int64(s.hold) { // that hold is over: a new lift would get a new id
			delete(s.waited, h)
		}
	}
	s.waited[hold] = now
	return nil
}

func (s *SoldOut) hasWaited(hold string) bool {
	s.waitedMu.Lock()
	defer s.waitedMu.Unlock()
	_, ok := s.waited[hold]
	return ok
}

// confirm records that product id's mark was value at a moment after from: a new copy if
// create and there is none of that value, else the lease of the copy extended.
func (s *SoldOut) confirm(id int64, value string, from int64, create bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.local.Load(id); ok {
		m := v.(*mark)
		if m.value == value {
			if from > m.from.Load() {
				m.from.Store(from)
			}
			return
		}
		if !create || m.from.Load() > from { // the other value was seen later
			return
		}
	} else if !create {
		return
	}
	m := &mark{value: value, seq: s.seq.Add(1)}
	m.from.Store(from)
	m.used.Store(s.round.Load())
	s.local.Store(id, m)
}

// forget drops product id's copy if it is still of value.
func (s *SoldOut) forget(id int64, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.local.Load(id); ok && v.(*mark).value == value {
		s.local.Delete(id)
	}
}

// drop drops product id's copy.
func (s *SoldOut) drop(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.local.Delete(id)
}
