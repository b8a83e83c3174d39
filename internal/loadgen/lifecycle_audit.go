package loadgen

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/seckill/seckill/internal/api"
)

// LifecycleReport is what an abandonment sale did with its reservations, in the run's report.
type LifecycleReport struct {
	PayWithinMS int64   `json:"pay_within_ms"`
	PayRatio    float64 `json:"pay_ratio"`
	CancelRatio float64 `json:"cancel_ratio"`
	PayDelayMS  int64   `json:"pay_delay_ms"`
	// StopReason is one of the Stop constants.
	StopReason string `json:"stop_reason"`
	// Payers are the winners' choices and every answer to their payments and cancels.
	Payers   PayerCounts       `json:"payers"`
	Timeline []LifecycleSecond `json:"timeline"`
	// Audit is the sale once settled: from PostgreSQL when the run reads it, else the API's.
	Audit    LifecycleAudit `json:"audit"`
	Problems []string       `json:"problems,omitempty"`
}

// LifecycleAudit is the state of an abandonment sale's units once settled.
type LifecycleAudit struct {
	Source       string `json:"source"` // ranDatabase or ranAPI
	InitialStock int64  `json:"initial_stock"`
	Stock        int64  `json:"stock"`
	Pending      int64  `json:"pending"`
	Paid         int64  `json:"paid"`
	Ended        int64  `json:"ended"` // expired or cancelled
	// Expired and Cancelled split Ended; the database alone tells them apart (nil from the API).
	Expired   *int64 `json:"expired,omitempty"`
	Cancelled *int64 `json:"cancelled,omitempty"`
	// UsersPaidTwice are users with more than one paid order.
	UsersPaidTwice int64 `json:"users_paid_twice"`
	// Resold are the reservations beyond the initial stock: units that came back and sold again.
	Resold int64 `json:"resold"`
}

const lifecycleQuery = `
SELECT p.initial_stock, p.stock,
       count(o.id) FILTER (WHERE o.status = 'pending'),
       count(o.id) FILTER (WHERE o.status = 'paid'),
       count(o.id) FILTER (WHERE o.status = 'expired'),
       count(o.id) FILTER (WHERE o.status = 'cancelled'),
       (SELECT count(*) FROM (SELECT 1 FROM orders d WHERE d.product_id = p.id AND d.status = 'paid'
                              GROUP BY d.user_id HAVING count(*) > 1) t)
  FROM products p LEFT JOIN orders o ON o.product_id = p.id
 WHERE p.id = $1
 GROUP BY p.id`

// directLifecycle reads product id's units from PostgreSQL.
func directLifecycle(ctx context.Context, pg *sql.DB, id int64) (LifecycleAudit, error) {
	a := LifecycleAudit{Source: ranDatabase, Expired: new(int64), Cancelled: new(int64)}
	err := pg.QueryRowContext(ctx, lifecycleQuery, id).Scan(&a.InitialStock, &a.Stock, &a.Pending, &a.Paid,
		a.Expired, a.Cancelled, &a.UsersPaidTwice)
	if err != nil {
		return LifecycleAudit{}, fmt.Errorf("audit the reservations of product %d in PostgreSQL: %w", id, err)
	}
	a.Ended = *a.Expired + *a.Cancelled
	return a, nil
}

// apiLifecycle is the API's audit in the figures of a LifecycleAudit.
func apiLifecycle(x *api.Audit) LifecycleAudit {
	return LifecycleAudit{Source: ranAPI, InitialStock: int64(x.InitialStock), Stock: int64(x.Stock), Pending: int64(x.Pending),
		Paid: int64(x.Orders - x.Pending), Ended: int64(x.Ended), UsersPaidTwice: int64(x.DuplicateUsers)}
}

// checkLifecycle lists what a settled abandonment sale shows that must never be: units lost
// or made (stock + pending + paid != initial stock), a unit paid twice, reservations the
// sweeper left pending past their window, and paid orders the payers' answers do not
// account for. paidOut: the stopping rule saw every unit paid.
func checkLifecycle(a LifecycleAudit, pc PayerCounts, paidOut bool) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	src := a.Source + " audit"
	if sum := a.Stock + a.Pending + a.Paid; sum != a.InitialStock {
		bad("%s: stock %d + pending %d + paid %d = %d, not the initial stock %d", src, a.Stock, a.Pending, a.Paid, sum, a.InitialStock)
	}
	if a.Stock < 0 {
		bad("%s: stock %d below 0", src, a.Stock)
	}
	if a.Paid > a.InitialStock {
		bad("%s: %d units paid of %d: units paid twice", src, a.Paid, a.InitialStock)
	}
	if a.UsersPaidTwice > 0 {
		bad("%s: %d users paid twice", src, a.UsersPaidTwice)
	}
	if a.Pending > 0 {
		bad("%s: %d reservations still pending after their window and the sweeper's interval", src, a.Pending)
	}
	if a.Expired != nil && a.Cancelled != nil && *a.Expired+*a.Cancelled != a.Ended {
		bad("%s: expired %d + cancelled %d != ended %d", src, *a.Expired, *a.Cancelled, a.Ended)
	}
	switch {
	case pc.PaidUsers > a.Paid:
		bad("%d users were answered paid but %s shows %d orders paid", pc.PaidUsers, src, a.Paid)
	case a.Paid > pc.PaidUsers+pc.Unclear:
		bad("%s shows %d orders paid but only %d users were answered paid (and %d payments or cancels had no clear answer)",
			src, a.Paid, pc.PaidUsers, pc.Unclear)
	}
	if paidOut && a.Paid != a.InitialStock {
		bad("the sale stopped as paid out but %s shows %d of %d units paid", src, a.Paid, a.InitialStock)
	}
	return problems
}
