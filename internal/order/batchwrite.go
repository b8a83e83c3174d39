package order

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

//go:embed sell.sql
var sellSQL string

// sellRow is one row of sell.sql's answer.
type sellRow struct {
	Kind      string // "o" order written, "a" already had one, "s" stock left
	UserID    *int64
	ID        *int64
	CreatedAt *time.Time
	Stock     *int
}

// writeBatch sells one unit to each distinct buyer in users, in arrival order, while stock
// lasts, under the lock's fence, in one atomic statement (sell.sql): one round trip and one
// commit for the whole batch, however large. It returns one result per entry of users and the
// stock left. An error means nothing was written.
func (s *Service) writeBatch(ctx context.Context, db *gorm.DB, p inventory.Product, users []int64, fence int64) ([]result, int, error) {
	if err := think(ctx, p); err != nil { // the teaching pause, with the lock held
		return nil, 0, err
	}
	var rows []sellRow
	err := db.Raw(sellSQL, map[string]any{"id": p.ID, "fence": fence, "users": pgArray(users)}).Scan(&rows).Error
	if err != nil {
		return nil, 0, fmt.Errorf("sell product %d: %w", p.ID, err)
	}
	orders, had, left := map[int64]Order{}, map[int64]bool{}, -1
	for _, r := range rows {
		switch r.Kind {
		case "o":
			orders[*r.UserID] = Order{ID: *r.ID, ProductID: p.ID, UserID: *r.UserID, CreatedAt: *r.CreatedAt}
		case "a":
			had[*r.UserID] = true
		case "s":
			if r.Stock != nil {
				left = *r.Stock
			}
		}
	}
	if left < 0 { // nothing written: say why, without writing
		return nil, 0, fmt.Errorf("sell product %d: %w", p.ID, inventory.WhyNotWritten(db, p.ID, fence))
	}
	return answers(p.ID, users, orders, had), left, nil
}

// answers gives each request its result: the buyer's order for their first request in the
// batch; already purchased for a buyer who had an order, and for a repeat request of a buyer
// who got one now; sold out for everyone else.
func answers(productID int64, users []int64, orders map[int64]Order, had map[int64]bool) []result {
	results := make([]result, len(users))
	answered := make(map[int64]bool, len(users))
	for i, u := range users {
		o, bought := orders[u]
		switch {
		case bought && !answered[u]:
			results[i].o = o
		case bought || had[u]:
			results[i].err = fmt.Errorf("user %d, product %d: %w", u, productID, ErrAlreadyPurchased)
		default:
			results[i].err = fmt.Errorf("product %d: %w", productID, inventory.ErrSoldOut)
		}
		answered[u] = true
	}
	return results
}

// pgArray renders ids as a PostgreSQL array literal, e.g. {1,2,3}.
func pgArray(ids []int64) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteByte('}')
	return b.String()
}
