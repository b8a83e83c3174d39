package order

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// Bounds of the buyer lists kept for sold-out products (see buyerLists).
const (
	// maxListed is the most buyers one product's list holds: 8 MiB. A product with more
	// orders is answered with one index probe per sold-out answer instead.
	maxListed = 1 << 20
	// maxLists is how many products' lists a process keeps; past it, the least recently
	// used one is dropped, to be read again if it is asked for.
	maxLists = 64
)

// buyerLists keep, for products marked sold out, who holds an order, so that a new buyer is
// answered sold out from memory and a buyer with an order is answered with it. A list belongs to
// one mark (inventory.SoldOut.Incarnation) and answers only while that mark is trusted
// (docs/strategies.md#retries-after-the-sell-out). It is safe for concurrent use; an answer reads
// shared memory only.
type buyerLists struct {
	marks               incarnations // nil: no list is kept, every buyer may hold an order
	maxListed, maxLists int          // 0: the defaults above (tests set them lower)
	flights             flights      // one read of a product's buyers at a time (see gateseed.go)
	m                   sync.Map     // int64 -> *buyerList
	mu                  sync.Mutex
	n                   int          // lists in m, under mu
	loads               atomic.Int64 // counts the reads of lists: a list's last use, in those
}

// incarnations names the mark a product is trusted sold out under (inventory.SoldOut).
type incarnations interface {
	Incarnation(id int64) (uint64, bool)
}

// buyerList is one sold-out product's buyers under mark inc, sorted; all is false when the
// product has more than maxListed of them, and then users is empty.
type buyerList struct {
	inc   uint64
	users []int64
	all   bool
	used  atomic.Int64
}

// maybeBuyer reports whether user may hold an order of the sold-out product id: false
// means certainly not. It reads the product's buyers from db once per process (buyers who
// need it meanwhile wait for that read, bounded by ctx).
func (b *buyerLists) maybeBuyer(ctx context.Context, db *gorm.DB, id, user int64) (bool, error) {
	if b.marks == nil {
		return true, nil
	}
	inc, ok := b.marks.Incarnation(id)
	if !ok { // no longer trusted: the caller asks PostgreSQL
		return true, nil
	}
	l, err := b.of(ctx, db, id, inc)
	if err != nil {
		return false, err
	}
	if !l.all {
		return true, nil
	}
	_, found := slices.BinarySearch(l.users, user)
	return found, nil
}

func (b *buyerLists) of(ctx context.Context, db *gorm.DB, id int64, inc uint64) (*buyerList, error) {
	v, ok := b.m.Load(id)
	if !ok || v.(*buyerList).inc != inc {
		key := "buyers " + strconv.FormatInt(id, 10) + " " + strconv.FormatUint(inc, 10)
		err := b.flights.do(ctx, key, func(ctx context.Context) error {
			return b.load(ctx, db, id, inc)
		})
		if err != nil {
			return nil, err
		}
		if v, ok = b.m.Load(id); !ok || v.(*buyerList).inc != inc { // dropped, or of another mark: say maybe
			return &buyerList{}, nil
		}
	}
	l := v.(*buyerList)
	if now := b.loads.Load(); l.used.Load() != now {
		l.used.Store(now)
	}
	return l, nil
}

// load reads product id's buyers from db and keeps them under mark inc, in place of a list
// of another mark, dropping the least recently used list past maxLists.
func (b *buyerLists) load(ctx context.Context, db *gorm.DB, id int64, inc uint64) error {
	var users []int64
	limit, lists := cmp.Or(b.maxListed, maxListed), cmp.Or(b.maxLists, maxLists)
	err := db.WithContext(ctx).Raw(`SELECT user_id FROM orders WHERE product_id = ? AND `+liveStatus+` ORDER BY user_id LIMIT ?`,
		id, limit+1).Scan(&users).Error
	if err != nil {
		return fmt.Errorf("read the buyers of sold-out product %d: %w", id, err)
	}
	l := &buyerList{inc: inc, users: users, all: len(users) <= limit}
	if !l.all {
		l.users = nil
	}
	l.used.Store(b.loads.Add(1))
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.m.Load(id); ok {
		if v.(*buyerList).inc == inc { // read again by a buyer who missed it just before it was kept
			return nil
		}
		b.m.Store(id, l) // a list of another mark: replaced
		return nil
	}
	if b.n >= lists { // drop the list used least recently (in loads: lists used since the same load tie)
		var oldest any
		var oldestUse int64
		b.m.Range(func(k, v any) bool {
			if u := v.(*buyerList).used.Load(); oldest == nil || u < oldestUse {
				oldest, oldestUse = k, u
			}
			return true
		})
		b.m.Delete(oldest)
		b.n--
	}
	b.m.Store(id, l)
	b.n++
	return nil
}

// drop forgets product id's list, if kept: its mark is lifted (a unit is coming back).
func (b *buyerLists) drop(id int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.m.LoadAndDelete(id); ok {
		b.n--
	}
}

// liftSoldOut lifts product id's sold-out mark and forgets its buyer list before a unit of it
// comes back (see inventory.SoldOut.Lift): the unit may go back only if it returns nil, and
// must be back in PostgreSQL within SOLDOUT_HOLD (inventory.SoldOutOptions.Hold) of the call:
// bound the return by a deadline under it. It waits a lease (SOLDOUT_LEASE) when a mark of
// the product may be trusted somewhere; a second lift of it in this process within the hold
// returns at once.
func (c *core) liftSoldOut(ctx context.Context, id int64) error {
	if err := c.soldOut.Lift(ctx, id); err != nil {
		return err
	}
	c.lists.drop(id)
	return nil
}

// soldOut answers a buyer of product id, which is marked sold out: with the order the user
// holds (a *PurchasedError), else inventory.ErrSoldOut, or errUnitBack when a unit came back
// (the caller buys). A new buyer costs no round trip.
func (s *Service) soldOut(ctx context.Context, id, userID int64) error {
	maybe, err := s.c.lists.maybeBuyer(ctx, s.c.db, id, userID)
	if err != nil {
		return err
	}
	if !maybe {
		return fmt.Errorf("product %d: %w", id, inventory.ErrSoldOut)
	}
	return orderOrSoldOut(s.c.db.WithContext(ctx), id, userID)
}

// errUnitBack is orderOrSoldOut's answer when the product's stock is no longer 0: a unit
// came back (a reservation ended) since the caller saw none, so the buyer may buy it.
var errUnitBack = errors.New("a unit came back")

// orderOrSoldOut answers a buyer of product id, which had no stock left, in tx: with the
// order the user holds (a *PurchasedError), else inventory.ErrSoldOut, or errUnitBack if a
// unit came back meanwhile. The stock and the order are read in one statement, one snapshot:
// read apart, a buyer whose reservation ended between the two reads (its unit back) would be
// answered sold out, which was true at no moment: while none was left it held an order, and
// once it held none a unit was there to buy (the history checker's rule, and #35's).
func orderOrSoldOut(tx *gorm.DB, id, userID int64) error {
	var rows []struct {
		Stock                             int
		ID, ProductID, UserID             *int64
		CreatedAt, PayBy, PaidAt, EndedAt *time.Time
		Status                            *string
	}
	err := tx.Raw(`SELECT p.stock, o.id, o.product_id, o.user_id, o.created_at, o.pay_by, o.paid_at,
		o.ended_at, o.status FROM products p LEFT JOIN orders o
		ON o.product_id = p.id AND o.user_id = ? AND o.`+liveStatus+` WHERE p.id = ?`, userID, id).Scan(&rows).Error
	switch {
	case err != nil:
		return fmt.Errorf("read the stock and the order of user %d, product %d: %w", userID, id, err)
	case len(rows) == 0:
		return fmt.Errorf("product %d: %w", id, inventory.ErrNotFound)
	case rows[0].ID != nil:
		r := rows[0]
		return &PurchasedError{Order: Order{ID: *r.ID, ProductID: *r.ProductID, UserID: *r.UserID,
			CreatedAt: *r.CreatedAt, Status: *r.Status, PayBy: r.PayBy, PaidAt: r.PaidAt, EndedAt: r.EndedAt}}
	case rows[0].Stock > 0:
		return errUnitBack
	}
	return fmt.Errorf("product %d: %w", id, inventory.ErrSoldOut)
}
