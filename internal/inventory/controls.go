package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"
)

// ErrPaused means the merchant paused the product's sale; a *PausedError holds it.
var ErrPaused = errors.New("inventory: sale paused")

// PausedError matches ErrPaused and says since when the sale is paused.
type PausedError struct {
	Product int64
	Since   time.Time
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("product %d: %v (since %s)", e.Product, ErrPaused, e.Since.Format(time.RFC3339Nano))
}

// Unwrap makes a *PausedError match ErrPaused.
func (e *PausedError) Unwrap() error { return ErrPaused }

// Paused returns a *PausedError if p's sale is paused, else nil. It reads only p.
func (p Product) Paused() error {
	if p.PausedAt == nil {
		return nil
	}
	return &PausedError{Product: p.ID, Since: *p.PausedAt}
}

// ControlLease is how long a process trusts its copy of a product's changeable fields
// (paused_at, ends_at, initial_stock) before Meta reads the row again: a pause, an early end
// or a restock made through any process reaches every purchase check of every process within
// it, announcement or not (docs/api.md#merchants-controls).
const ControlLease = time.Second

// refreshTimeout bounds one re-read of a product by Meta: the wait it may add to a purchase
// while PostgreSQL hangs, once per lease (docs/api.md#merchants-controls).
const refreshTimeout = 500 * time.Millisecond

// leases is the Store's record of when each cached product was read, and of the products
// whose controls changed since. Safe for concurrent use.
type leases struct {
	ttl     time.Duration // 0: ControlLease
	mu      sync.Mutex    // serialises remember
	read    sync.Map      // int64 -> time.Time: when the read of the cached copy began
	dropped sync.Map      // int64 -> time.Time: when the cached copy was last dropped
	flights singleflight.Group
	// announce, if set (NewControls), tells the other processes that a product's controls changed.
	announce func(ctx context.Context, id int64)
}

// remember caches p, read from a start, unless a read begun later is cached already. The
// product goes in before its time, which cached reads first: a copy is never taken for fresher
// than it is.
func (s *Store) remember(p Product, start time.Time) {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	if v, ok := s.leases.read.Load(p.ID); ok && v.(time.Time).After(start) {
		return
	}
	s.meta.Store(p.ID, p)
	s.leases.read.Store(p.ID, start)
}

// cached returns the cached copy of product id if it is still trusted at now: read less than a
// lease ago, and not dropped since.
func (s *Store) cached(id int64, now time.Time) (Product, bool) {
	v, ok := s.leases.read.Load(id)
	if !ok {
		return Product{}, false
	}
	at := v.(time.Time)
	if now.Sub(at) >= s.leases.lease() {
		return Product{}, false
	}
	if d, dropped := s.leases.dropped.Load(id); dropped && !at.After(d.(time.Time)) {
		return Product{}, false
	}
	p, ok := s.meta.Load(id)
	if !ok {
		return Product{}, false
	}
	return p.(Product), true
}

func (l *leases) lease() time.Duration {
	if l.ttl > 0 {
		return l.ttl
	}
	return ControlLease
}

// drop makes the next Meta of product id read it again.
func (l *leases) drop(id int64) {
	l.dropped.Store(id, time.Now())
	l.read.Delete(id)
}

// PausedNow reports whether product id, if cached, is paused in this process's copy (at most a
// lease old). It never reads PostgreSQL.
func (s *Store) PausedNow(id int64) bool {
	p, ok := s.meta.Load(id)
	return ok && p.(Product).PausedAt != nil
}

// SetControlLease sets how long the Store trusts its copy of a product's controls
// (CONTROL_LEASE); 0 means ControlLease. Call it before use.
func (s *Store) SetControlLease(d time.Duration) { s.leases.ttl = d }

// refresh reads product id again for Meta, once per product at a time in this process (other
// callers wait for that read). If PostgreSQL cannot be read within refreshTimeout, the stale
// copy is trusted for one more lease (docs/api.md#merchants-controls). A product never read is
// read on ctx, as Get.
func (s *Store) refresh(ctx context.Context, id int64, stale any, had bool) (Product, error) {
	if !had {
		return s.Get(ctx, id)
	}
	ch := s.leases.flights.DoChan(strconv.FormatInt(id, 10), func() (any, error) {
		start := time.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		p, err := s.Get(rctx, id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			s.remember(stale.(Product), start)
			return stale.(Product), nil
		}
		return p, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return Product{}, r.Err
		}
		return r.Val.(Product), nil
	case <-ctx.Done():
		return Product{}, context.Cause(ctx)
	}
}

// Pause pauses product id's sale (a second pause keeps the first's time) and returns the
// product. Errors: ErrNotFound.
func (s *Store) Pause(ctx context.Context, id int64) (Product, error) {
	return s.control(ctx, id, "pause", `UPDATE products SET paused_at = COALESCE(paused_at, clock_timestamp()),
		updated_at = now() WHERE id = ? RETURNING *`, id)
}

// Resume resumes product id's sale, paused or not, and returns the product. Errors: ErrNotFound.
func (s *Store) Resume(ctx context.Context, id int64) (Product, error) {
	return s.control(ctx, id, "resume", `UPDATE products SET paused_at = NULL, updated_at = now() WHERE id = ? RETURNING *`, id)
}

// End ends product id's sale at now (the API's clock, which decides windows), or keeps an
// earlier ends_at, and returns the product. Errors: ErrNotFound, a *WindowError of
// ErrNotStarted (a sale that has not started cannot end: pause it).
func (s *Store) End(ctx context.Context, id int64, now time.Time) (Product, error) {
	p, err := s.control(ctx, id, "end", `UPDATE products SET ends_at = LEAST(COALESCE(ends_at, @now), @now), updated_at = now()
		WHERE id = @id AND (starts_at IS NULL OR starts_at < @now) RETURNING *`, map[string]any{"id": id, "now": now})
	if !errors.Is(err, ErrNotFound) {
		return p, err
	}
	if p, err = s.Get(ctx, id); err != nil {
		return Product{}, err
	}
	if p.StartsAt == nil { // never: only a start to come keeps the row from the update
		return Product{}, fmt.Errorf("end product %d: no row updated", id)
	}
	return Product{}, &WindowError{Product: id, Err: ErrNotStarted, At: *p.StartsAt}
}

// control runs one UPDATE ... RETURNING * of product id, caches the product it returns and
// announces the change. No row is ErrNotFound.
func (s *Store) control(ctx context.Context, id int64, what, query string, args ...any) (Product, error) {
	var rows []Product
	if err := s.db.WithContext(ctx).Raw(query, args...).Scan(&rows).Error; err != nil {
		return Product{}, fmt.Errorf("%s product %d: %w", what, id, err)
	}
	if len(rows) == 0 {
		return Product{}, fmt.Errorf("product %d: %w", id, ErrNotFound)
	}
	s.Changed(ctx, id)
	return rows[0], nil
}

// Changed drops this process's copy of product id and announces the change to the others
// (NewControls). Call it after a change of the product's controls commits.
func (s *Store) Changed(ctx context.Context, id int64) {
	s.leases.drop(id)
	if s.leases.announce != nil {
		s.leases.announce(ctx, id)
	}
}

// Controls tells every process's Store that a product's controls changed, best effort: a lost
// announcement costs at most ControlLease. Safe for concurrent use.
type Controls struct {
	rdb   redis.UniversalClient
	keys  Keys
	store *Store
	log   *slog.Logger
}

// NewControls makes store announce its products' changes through rdb. Call it before use.
func NewControls(rdb redis.UniversalClient, keys Keys, store *Store, log *slog.Logger) *Controls {
	c := &Controls{rdb: rdb, keys: keys, store: store, log: log}
	store.leases.announce = c.announce
	return c
}

func (c *Controls) announce(ctx context.Context, id int64) {
	if err := announce(ctx, c.rdb, c.keys.ControlsChannel(), id); err != nil {
		c.log.WarnContext(ctx, "announcing a change of a sale's controls failed; every process reads it within the lease",
			"product_id", id, "lease", ControlLease, "err", err)
	}
}

// Listen makes the Store forget each announced product until ctx ends.
func (c *Controls) Listen(ctx context.Context) {
	listenIDs(ctx, c.rdb, c.keys.ControlsChannel(), c.store.leases.drop)
}

// AddStock adds units to product id's stock and initial stock in tx (orders == initial_stock
// - stock holds) and returns the product. Errors: ErrNotFound, ErrInvalid (past MaxStock).
func AddStock(tx *gorm.DB, id int64, units int) (Product, error) {
	var rows []Product
	err := tx.Raw(`UPDATE products SET stock = stock + @n, initial_stock = initial_stock + @n, updated_at = now()
		WHERE id = @id AND initial_stock + @n <= @max RETURNING *`, map[string]any{"id": id, "n": units, "max": MaxStock}).
		Scan(&rows).Error
	switch {
	case err != nil:
		return Product{}, fmt.Errorf("restock product %d: %w", id, err)
	case len(rows) == 1:
		return rows[0], nil
	}
	if _, err := Stock(tx, id, false); err != nil {
		return Product{}, err
	}
	return Product{}, fmt.Errorf("%w: units would take initial_stock past %d", ErrInvalid, MaxStock)
}
