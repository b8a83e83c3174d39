package order

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seckill/seckill/internal/inventory"
)

//go:embed sell.sql
var sellSQL string

// sellPlanning is the setting sell.sql runs under (see the comment at its top): an index
// probe per buyer, whatever the statistics said when its plan was made.
const sellPlanning = `SET LOCAL enable_seqscan = off`

// sellRow is one row of sell.sql's answer.
type sellRow struct {
	Kind      string // "o" order written, "a" already had one, "w" entry written before, "s" stock left
	UserID    *int64
	ID        *int64
	CreatedAt *time.Time
	Status    *string
	PayBy     *time.Time
	PaidAt    *time.Time
	Stock     *int
	Ord       *int // of a "w" row: its request's place in users, from 1
}

// sold is what one batch's statement did.
type sold struct {
	orders  []Order         // written now
	had     map[int64]Order // buyers who already had an order
	written map[int]Order   // requests (by index in users) whose entry was written before, its order
	left    int             // stock left
}

// writeBatch sells one unit to each distinct buyer in users, in arrival order, while stock lasts,
// under the lock's fence, in one pipelined transaction (sell.sql); entries, when not nil, are the
// queued buyer's stream entries, and an entry written already is answered with its order. It
// returns a result per request and the stock left; an error means nothing was written, unless it
// matches ErrOutcomeUnknown.
func (c *core) writeBatch(ctx context.Context, p inventory.Product, users []int64, entries []string, fence int64) ([]result, int, error) {
	var out sold
	err := c.runPipelinedTx(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT stock, fence FROM products WHERE id = $1 FOR UPDATE`, p.ID)
		b.Queue(sellPlanning)
		b.Queue(sellSQL, pgx.NamedArgs{"id": p.ID, "fence": fence, "users": users, "entries": entries})
	}, func(br pgx.BatchResults) error {
		var stock int
		var current int64
		if err := br.QueryRow().Scan(&stock, &current); errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("product %d: %w", p.ID, inventory.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("lock product %d: %w", p.ID, err)
		}
		if _, err := br.Exec(); err != nil { // the planner setting
			return fmt.Errorf("sell: %w", err)
		}
		var err error
		if out, err = readSold(br, p.ID); err != nil {
			return err
		}
		if len(out.written) > 0 {
			c.log.InfoContext(ctx, "queued purchases written before, answered with their orders (a batch claimed after its consumer stopped between COMMIT and XACK)",
				"product_id", p.ID, "entries", len(out.written))
		}
		if out.left < 0 { // the fence condition held no row: nothing was written
			// Said once a batch: a holder overtaken by a newer one (paused past its lease), or
			// a lock whose store lost fences it gave out (see lockedBuyer.raise).
			c.log.WarnContext(ctx, "write refused: the product was written under a newer lock fence",
				"product_id", p.ID, "fence", fence, "product_fence", current, "buyers", len(users))
			return &inventory.StaleFenceError{Product: p.ID, Fence: fence, Stored: current}
		}
		return nil
	})
	if err = c.settleOrders(ctx, p.ID, out.orders, err); err != nil {
		return nil, 0, fmt.Errorf("sell product %d: %w", p.ID, err)
	}
	return answers(p.ID, users, out), out.left, nil
}

// readSold reads the rows of sell.sql; left is -1 when it updated no row.
func readSold(br pgx.BatchResults, id int64) (sold, error) {
	rows, err := br.Query()
	if err != nil {
		return sold{}, fmt.Errorf("sell: %w", err)
	}
	out := sold{had: map[int64]Order{}, written: map[int]Order{}, left: -1}
	for rows.Next() {
		var r sellRow
		if err := rows.Scan(&r.Kind, &r.UserID, &r.ID, &r.CreatedAt, &r.Status, &r.PayBy, &r.PaidAt, &r.Stock, &r.Ord); err != nil {
			rows.Close()
			return sold{}, fmt.Errorf("sell: %w", err)
		}
		switch r.Kind {
		case "o":
			out.orders = append(out.orders, r.order(id))
		case "a":
			out.had[*r.UserID] = r.order(id)
		case "w":
			out.written[*r.Ord-1] = r.order(id)
		case "s":
			if r.Stock != nil {
				out.left = *r.Stock
			}
		}
	}
	if err := rows.Err(); err != nil {
		return sold{}, fmt.Errorf("sell: %w", err)
	}
	return out, nil
}

// order is the order of an 'o' or 'a' row.
func (r sellRow) order(product int64) Order {
	return Order{ID: *r.ID, ProductID: product, UserID: *r.UserID, CreatedAt: *r.CreatedAt, Status: *r.Status,
		PayBy: r.PayBy, PaidAt: r.PaidAt}
}

// answers gives each request its result: already purchased, with its order, for a request
// whose entry was written before; the buyer's order for their first other request in the
// batch; already purchased, with the order, for a buyer who had one and for a repeat
// request of a buyer who got one now; sold out for everyone else.
func answers(productID int64, users []int64, out sold) []result {
	bought := make(map[int64]Order, len(out.orders))
	for _, o := range out.orders {
		bought[o.UserID] = o
	}
	results := make([]result, len(users))
	answered := make(map[int64]bool, len(users))
	for i, u := range users {
		if w, ok := out.written[i]; ok {
			results[i].err = &PurchasedError{Order: w}
			continue
		}
		o, now := bought[u]
		had, before := out.had[u]
		switch {
		case now && !answered[u]:
			results[i].o = o
		case now:
			results[i].err, results[i].had = &PurchasedError{Order: o}, true
		case before:
			results[i].err, results[i].had = &PurchasedError{Order: had}, true
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
