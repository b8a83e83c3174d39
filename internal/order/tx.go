package order

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// core is what every buyer shares: the database and the per-product connection slots its
// transactions take, the configuration, the log, the observer, the product keys, the
// sold-out mark and the buyer lists behind it, and the think_ms pause. The shared
// transaction helpers (runTx, settle, buyInTx) are its methods, in this file.
type core struct {
	db       *gorm.DB
	cfg      Config
	log      *slog.Logger
	observer Observer // never nil: NewService puts a no-op one in place of none
	products *inventory.Store
	keys     inventory.Keys
	soldOut  *inventory.SoldOut
	lists    *buyerLists // who holds an order of each sold-out product (the fast path's retries)
	slots    *slots
	thinker  Thinker      // nil: think_ms is not taken (see think)
	tracer   trace.Tracer // nil unless Deps.Tracer records: no spans (see trace.go)
}

// The bounds of the two steps that may outlast a purchase's deadline (Config.PurchaseTimeout).
const (
	// commitTimeout bounds a COMMIT once sent.
	commitTimeout = 5 * time.Second
	// settleTimeout bounds finding out what became of a COMMIT that got no answer.
	settleTimeout = 5 * time.Second
)

// AfterDeadline is how long past its deadline (Config.PurchaseTimeout) a purchase may take to
// be answered: a COMMIT sent by the deadline, then finding out what became of one that got no
// answer. A server's write timeout must leave room for it (cmd/api).
const AfterDeadline = commitTimeout + settleTimeout

// IdleInTransactionTimeout is the idle_in_transaction_session_timeout cmd/api sets for purchases that end
// at purchaseTimeout: a second more, so PostgreSQL frees the rows of a frozen or cut-off
// process. See docs/failures.md#silent-partitions.
func IdleInTransactionTimeout(purchaseTimeout time.Duration) time.Duration {
	return purchaseTimeout + time.Second
}

// errCommitUnknown marks a transaction whose COMMIT was sent and got no answer: it may have
// committed. settle finds out.
var errCommitUnknown = errors.New("order: commit sent, no answer")

// runTx runs work in a transaction of its own and commits it on a context detached from ctx,
// bounded by commitTimeout, so that once work succeeded losing the lock or the deadline no longer
// decides the outcome. An error wrapping errCommitUnknown means COMMIT got no answer; any other
// error means nothing was written.
func (c *core) runTx(ctx context.Context, work func(tx *gorm.DB) error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeLeft(ctx)+commitTimeout)
	defer cancel()
	tx := c.db.WithContext(cctx).Begin()
	if tx.Error != nil {
		return fmt.Errorf("begin: %w", tx.Error)
	}
	if err := work(tx.WithContext(ctx)); err != nil {
		tx.Rollback() // a broken connection takes the transaction with it: no error to act on
		return err
	}
	err := tx.Commit().Error
	switch {
	case err == nil:
		return nil
	case notCommitted(err):
		return fmt.Errorf("commit: %w", err)
	}
	return fmt.Errorf("%w: %w", errCommitUnknown, err)
}

// notCommitted reports whether a failed COMMIT certainly did not commit: PostgreSQL answered
// it with an error or a rollback, or database/sql had already ended the transaction. Any other
// failure is settled instead, even one pgx calls safe to retry: pgx v5.12 reports a read that
// failed after COMMIT was sent as "conn closed", an error that claims nothing was sent
// (TestPostgresConnectionsCut caught an order committed behind it).
func notCommitted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback) || errors.Is(err, sql.ErrTxDone)
}

// timeLeft is the time before ctx's deadline (zero without one, or once it passed).
func timeLeft(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(0, time.Until(d))
	}
	return 0
}

//go:embed settle.sql
var settleSQL string

// settle finds out whether a transaction whose COMMIT got no answer committed: the
// transaction that inserted the orders ids, one for each of users, for product. It asks on
// another connection, and first waits for that transaction to end (see settle.sql), so the
// answer is final; it keeps asking while PostgreSQL cannot be reached, for up to
// settleTimeout. An error means the outcome is still unknown.
func (c *core) settle(ctx context.Context, product int64, users, ids []int64) (committed bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		committed, err = c.settleOnce(ctx, product, users, ids)
		if err == nil || !IsUnavailable(err) {
			return committed, err
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(pause):
		}
	}
}

// errProbeDone rolls back settle's probe.
var errProbeDone = errors.New("probe done")

// settleOnce asks once. An order counts only as its buyer's (ids[i] is users[i]'s) and as
// none of the probe's own: after a failover the new primary may hand out again the ids the
// old one handed out last, to other buyers or to the probe (see settle.sql). Matching ids
// alone answered "committed" for an order the new primary never had (TestSettleAfterFailover).
func (c *core) settleOnce(ctx context.Context, product int64, users, ids []int64) (bool, error) {
	var found int64
	err := c.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var probed []int64
		if err := tx.Raw(settleSQL, map[string]any{"id": product, "users": pgArray(users)}).Scan(&probed).Error; err != nil {
			return err
		}
		err := tx.Raw(`SELECT count(*) FROM orders o
			JOIN unnest(CAST(? AS bigint[]), CAST(? AS bigint[])) AS t(id, user_id) ON o.id = t.id AND o.user_id = t.user_id
			WHERE o.product_id = ? AND o.id <> ALL(CAST(? AS bigint[]))`,
			pgArray(ids), pgArray(users), product, pgArray(probed)).Scan(&found).Error
		if err != nil {
			return err
		}
		return errProbeDone // the probe's inserts must not stay
	})
	if !errors.Is(err, errProbeDone) {
		return false, fmt.Errorf("settle a commit of product %d: %w", product, err)
	}
	return found > 0, nil
}

// settleOrders turns the error of a runTx whose transaction inserted orders into its true
// outcome: nil when it committed after all, an ErrUnavailable when it did not (nothing was
// written), ErrOutcomeUnknown when PostgreSQL could not tell in time. Other errors pass.
func (c *core) settleOrders(ctx context.Context, product int64, orders []Order, err error) error {
	if !errors.Is(err, errCommitUnknown) || len(orders) == 0 {
		return err // a transaction that inserted no order changed nothing a buyer is told of
	}
	users, ids := make([]int64, len(orders)), make([]int64, len(orders))
	for i, o := range orders {
		users[i], ids[i] = o.UserID, o.ID
	}
	committed, serr := c.settle(ctx, product, users, ids)
	result := map[bool]string{true: "committed", false: "rolled_back"}[committed]
	if serr != nil {
		result = "unknown"
	}
	c.log.WarnContext(ctx, "COMMIT got no answer; asked PostgreSQL", "product_id", product, "orders", len(orders),
		"result", result, "commit_err", err, "err", serr)
	c.observer.Settled(result)
	switch result {
	case "unknown":
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	case "committed":
		return nil
	}
	return fmt.Errorf("%w: commit failed, nothing written: %w", ErrUnavailable, err)
}

// buyInTx runs one buyer's write in a transaction of its own (see runTx) while holding one
// of the product's connection slots, finds out what became of a COMMIT that got no answer,
// and marks the product sold out once a committed write left no stock. write returns the
// order, and the stock left (negative: do not mark).
func (c *core) buyInTx(ctx context.Context, p inventory.Product, userID int64,
	write func(tx *gorm.DB) (Order, int, error),
) (Order, error) {
	release, err := c.slots.acquire(ctx, p.ID, p.Strategy)
	if err != nil {
		return Order{}, err
	}
	defer release()
	var (
		o    Order
		left int
	)
	err = c.runTx(ctx, func(tx *gorm.DB) error {
		var err error
		o, left, err = write(tx)
		return err
	})
	if errors.Is(err, errCommitUnknown) {
		err = c.settleOrders(ctx, p.ID, []Order{o}, err)
	}
	if err != nil {
		return Order{}, err
	}
	c.soldOutIfZero(ctx, p.ID, left)
	return o, nil
}

// soldOutIfZero marks the product sold out when left is 0.
func (c *core) soldOutIfZero(ctx context.Context, id int64, left int) {
	if left == 0 {
		c.soldOut.Mark(ctx, id)
	}
}
