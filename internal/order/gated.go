package order

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// gatedBuyer is the redis strategy: an atomic Lua gate in Redis admits at most stock distinct
// buyers, each admission pending until PostgreSQL's answer confirms it, gives it back, or syncs
// the gate (see reconcile). The admitted buyers are written in batches under a writer slot per
// product, as the dlock strategy writes them. Its state is the gate, its seeder, its writer slots
// and the batches; docs/strategies.md#the-redis-gate-under-faults says how it stays true.
type gatedBuyer struct {
	*core
	gate    *inventory.Gate
	seeder  *seeder
	writers writers
	batches *lockedBuyer
}

func newGatedBuyer(c *core, gate *inventory.Gate, seeder *seeder) *gatedBuyer {
	g := &gatedBuyer{core: c, gate: gate, seeder: seeder}
	g.batches = newLockedBuyer(c, &g.writers, g)
	return g
}

func (g *gatedBuyer) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	token := newToken()
	if err := g.admit(ctx, p.ID, userID, token); err != nil {
		return Order{}, err
	}
	res := g.batches.buyBatched(ctx, p, userID)
	o, err := res.o, res.err
	switch {
	case res.confirmed: // by the batch's leader
	case err == nil, errors.Is(err, ErrAlreadyPurchased):
		g.confirm(ctx, p.ID, userID)
	case errors.Is(err, ErrOutcomeUnknown):
		// Left pending: it expires, and reconcile asks PostgreSQL.
	case errors.Is(err, inventory.ErrSoldOut):
		g.sync(ctx, p.ID)
	default:
		g.giveBack(ctx, p.ID, userID, token)
	}
	return o, err
}

// admissionTTL is how long an admission stays pending before reconcile may settle it: longer
// than any purchase can take from admission to its answer, so that only the admissions of
// purchases that ended without telling the gate (a killed process, a lost Redis reply) expire.
func (g *gatedBuyer) admissionTTL() time.Duration {
	return g.cfg.PurchaseTimeout + AfterDeadline + time.Second
}

// admit passes the buyer through the gate: seeding the gate from PostgreSQL first when it is
// missing, reconciling expired admissions when it is sold out with some, and verifying it when
// it is sold out in a Redis data set it was not stamped in (see verifyGate).
func (g *gatedBuyer) admit(ctx context.Context, id, userID int64, token string) error {
	for first := true; ; first = false {
		err := g.gate.Admit(ctx, id, userID, token, g.admissionTTL())
		switch {
		case err == nil:
			return nil
		case first && errors.Is(err, inventory.ErrGateNotSeeded):
			if err := g.seeder.seedGate(ctx, id, inventory.SeedInit); err != nil {
				return err
			}
		case first && errors.Is(err, inventory.ErrGateUnverified):
			if err := g.seeder.verifyGate(ctx, id); err != nil {
				return err
			}
		case first && errors.Is(err, inventory.ErrAdmissionsExpired):
			if err := g.seeder.repairGate(ctx, "reconcile", id, func(ctx context.Context) error {
				return g.reconcile(ctx, id)
			}); err != nil {
				return err
			}
		case first && errors.Is(err, inventory.ErrAlreadyAdmitted) && g.settled(ctx, id, userID):
			// Counted for a reservation that ended, whose unit the gate had not taken back yet.
		case errors.Is(err, inventory.ErrAlreadyAdmitted):
			return g.alreadyBought(ctx, id, userID)
		case errors.Is(err, inventory.ErrSoldOut):
			return err
		case errors.Is(err, inventory.ErrAdmissionInFlight), errors.Is(err, inventory.ErrGateNotSeeded),
			errors.Is(err, inventory.ErrAdmissionsExpired), errors.Is(err, inventory.ErrAdmissionsPending),
			errors.Is(err, inventory.ErrGateUnverified):
			return fmt.Errorf("%w: %w", ErrBusy, err)
		default: // Redis failed: the admission may have happened all the same
			g.giveBack(ctx, id, userID, token)
			return err
		}
	}
}

// settled reports whether the gate counted the buyer for reservations that ended, and gives
// their units back now (see returner.settleUser); if that fails, alreadyBought answers busy.
func (g *gatedBuyer) settled(ctx context.Context, id, userID int64) bool {
	ok, _ := g.seeder.returns.settleUser(ctx, id, userID)
	return ok
}

// alreadyBought answers a buyer the gate counts as bought with the order PostgreSQL holds. A
// gate that counts a buyer PostgreSQL has no order of is wrong: it is synced, and the buyer
// may retry.
func (g *gatedBuyer) alreadyBought(ctx context.Context, id, userID int64) error {
	o, err := orderOf(g.db.WithContext(ctx), id, userID)
	if errors.Is(err, ErrOrderNotFound) {
		g.sync(ctx, id)
		return fmt.Errorf("%w: the gate counted user %d of product %d as a buyer", ErrBusy, userID, id)
	}
	if err != nil {
		return err
	}
	return &PurchasedError{Order: o}
}

// reconcile settles expired admissions of product id with PostgreSQL: a buyer with an order
// is confirmed, the others' units go back to the gate. An admission expires only after its
// purchase has ended (see admissionTTL), and a paused process that commits later meets
// PostgreSQL's own guards and the sync that follows.
func (g *gatedBuyer) reconcile(ctx context.Context, id int64) error {
	expired, err := g.gate.Expired(ctx, id, 100)
	if err != nil || len(expired) == 0 {
		return err
	}
	users := make([]int64, len(expired))
	for i, e := range expired {
		users[i] = e.User
	}
	var have []int64
	err = g.db.WithContext(ctx).Raw(`SELECT user_id FROM orders WHERE product_id = ? AND user_id = ANY(CAST(? AS bigint[])) AND `+liveStatus,
		id, pgArray(users)).Scan(&have).Error
	if err != nil {
		return fmt.Errorf("reconcile gate of product %d: %w", id, err)
	}
	bought := make(map[int64]bool, len(have))
	for _, u := range have {
		bought[u] = true
	}
	g.confirm(ctx, id, have...)
	for _, e := range expired {
		if !bought[e.User] {
			if err := g.gate.GiveBack(ctx, id, e.User, e.Token); err != nil {
				return err
			}
		}
	}
	g.log.WarnContext(ctx, "reconciled expired gate admissions", "product_id", id, "confirmed", len(have),
		"given_back", len(expired)-len(have))
	g.observer.Reconciled(len(have), len(expired)-len(have))
	return nil
}

// confirm records in the gate that PostgreSQL holds the orders of users, in one round trip,
// and reports whether that succeeded. It runs even when ctx is cancelled; if it fails, the
// admissions expire and reconcile confirms them later.
func (g *gatedBuyer) confirm(ctx context.Context, id int64, users ...int64) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	needSync, err := g.gate.Confirm(ctx, id, users...)
	if err != nil {
		g.log.WarnContext(ctx, "gate confirmation failed; the admissions will be reconciled when they expire",
			"product_id", id, "users", len(users), "err", err)
	}
	if needSync {
		g.sync(ctx, id)
	}
	return err == nil
}

// giveBack returns the unit of user's attempt token, which wrote nothing. It runs even when
// ctx is cancelled; if it fails, the admission expires and reconcile gives the unit back.
func (g *gatedBuyer) giveBack(ctx context.Context, id, userID int64, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := g.gate.GiveBack(ctx, id, userID, token); err != nil {
		g.log.WarnContext(ctx, "gate give-back failed; the admission will be reconciled when it expires",
			"product_id", id, "user_id", userID, "err", err)
	}
}

// gateSoldOut checks the gate of product id, whose last unit PostgreSQL has just sold: a gate
// that agrees has none left either. One that has (it lost admissions and confirmations that
// PostgreSQL wrote: a Redis failover to a replica that missed them) would never be refused by
// PostgreSQL again, since sold-out answers no longer reach it, so it is synced now.
func (g *gatedBuyer) gateSoldOut(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if st, err := g.gate.State(ctx, id); err == nil && st.Seeded && st.Stock > 0 {
		g.log.WarnContext(ctx, "gate counts units PostgreSQL has sold; syncing it", "product_id", id, "gate_stock", st.Stock)
		g.sync(ctx, id)
	}
}

// sync overwrites the gate of product id from PostgreSQL. The buyer who asks waits for it a
// second at most (a seeding of a product with many orders takes longer); the seeding goes on
// meanwhile, whatever happens to ctx. If it fails, the gate stays wrong until the next sync.
func (g *gatedBuyer) sync(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	err := g.seeder.seedGate(ctx, id, inventory.SeedSync)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		g.log.InfoContext(ctx, "gate sync goes on in the background", "product_id", id)
	case err != nil:
		g.log.WarnContext(ctx, "gate and PostgreSQL disagree until the gate is synced", "product_id", id, "err", err)
	}
}

// newToken names one purchase attempt: 64 random bits.
func newToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
