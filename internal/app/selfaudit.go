package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/metrics"
)

// SelfAuditConfig says how often an API process audits the products on sale and exports what
// it found (seckill_audit_inconsistent_products). The zero value is off.
type SelfAuditConfig struct {
	Every    time.Duration // time between rounds; 0: no self-audit
	Products int           // most products a round reads, the newest first; default 50
	Window   time.Duration // of those, the ones created or sold within it; default 1h
}

// selfAudit is the audit loop. Each round reads, without a lock, the newest products created
// or sold within the window, and audits each with internal/audit (one PostgreSQL statement,
// and three or four Redis reads for a redis or queue product). docs/running-a-sale.md#seckillinconsistent
// says what counts as inconsistent and why a Redis disagreement must be seen twice.
type selfAudit struct {
	cfg     SelfAuditConfig
	db      *gorm.DB
	auditor *audit.Auditor
	obs     *metrics.AuditMetrics
	log     *slog.Logger
	seen    map[int64]audit.Sale // the last round's Redis disagreements
}

func newSelfAudit(cfg SelfAuditConfig, db *gorm.DB, auditor *audit.Auditor, obs *metrics.AuditMetrics, log *slog.Logger) *selfAudit {
	if cfg.Products <= 0 {
		cfg.Products = 50
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Hour
	}
	return &selfAudit{cfg: cfg, db: db, auditor: auditor, obs: obs, log: log}
}

// run audits a first time at once, then every cfg.Every, until ctx ends.
func (s *selfAudit) run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, min(s.cfg.Every, 10*time.Second))
		audited, bad, err := s.round(rctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.obs.Failed()
			s.log.WarnContext(ctx, "self-audit round failed", "err", err)
		default:
			s.obs.Round(audited, bad)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// auditedStrategy reports whether products of strategy are audited: the production ones. The lab
// build's teaching strategies oversell by design (docs/strategies.md).
func auditedStrategy(strategy string) bool {
	return slices.Contains(inventory.Strategies, inventory.Strategy(strategy))
}

// round audits the products on sale and returns how many it read and how many of them are
// inconsistent, or the first error that stopped it.
func (s *selfAudit) round(ctx context.Context) (audited, inconsistent int, err error) {
	type product struct {
		ID       int64
		Strategy string
	}
	var products []product
	err = s.db.WithContext(ctx).Raw(`SELECT id, strategy FROM (
		SELECT id, strategy, updated_at FROM products ORDER BY id DESC LIMIT ?) newest
		WHERE updated_at > now() - make_interval(secs => ?)`, s.cfg.Products, s.cfg.Window.Seconds()).Scan(&products).Error
	if err != nil {
		return 0, 0, fmt.Errorf("list products on sale: %w", err)
	}
	products = slices.DeleteFunc(products, func(p product) bool { return !auditedStrategy(p.Strategy) })
	seen := map[int64]audit.Sale{}
	for _, p := range products {
		gated := p.Strategy == string(inventory.StrategyRedis) || p.Strategy == string(inventory.StrategyQueue)
		sale, err := s.auditor.Sale(ctx, p.ID, gated)
		if err != nil {
			return 0, 0, err
		}
		bad := !tablesAddUp(sale)
		if !redisAgrees(sale) {
			if prev, ok := s.seen[p.ID]; ok && sameSale(prev, sale) {
				bad = true
			}
			seen[p.ID] = sale
		}
		if bad {
			inconsistent++
			s.log.WarnContext(ctx, "self-audit: product inconsistent", "product_id", p.ID, "strategy", p.Strategy,
				"initial_stock", sale.InitialStock, "stock", sale.Stock, "orders", sale.Orders,
				"duplicate_users", sale.DuplicateUsers, "gate", sale.Gate, "queue", sale.Queue)
		}
	}
	s.seen = seen
	return len(products), inconsistent, nil
}

// tablesAddUp: PostgreSQL's figures, read in one statement, hold what every sale keeps.
func tablesAddUp(s audit.Sale) bool {
	return s.Orders == s.Sold && s.Stock >= 0 && s.Oversold == 0 && s.DuplicateUsers == 0
}

// redisAgrees: the Redis side of a redis or queue product agrees with PostgreSQL, allowing
// for the gate's pending admissions (admitted, PostgreSQL's answer not yet at the gate). A
// gate Redis no longer holds (lost with its data) is seeded again from PostgreSQL: nothing
// to disagree with.
func redisAgrees(s audit.Sale) bool {
	if g := s.Gate; g != nil && g.Seeded {
		held := s.Stock - g.Stock // admissions PostgreSQL has no order of yet
		return held >= 0 && held <= g.Pending && g.Buyers-s.Orders == held
	}
	if q := s.Queue; q != nil && q.Seeded {
		return q.Stock == s.Stock-q.Queued && q.Buyers == s.Orders+q.Queued
	}
	return true
}

// sameSale: nothing moved between two audits of a product.
func sameSale(a, b audit.Sale) bool {
	switch {
	case a.Stock != b.Stock || a.Orders != b.Orders || (a.Gate == nil) != (b.Gate == nil) || (a.Queue == nil) != (b.Queue == nil):
		return false
	case a.Gate != nil && *a.Gate != *b.Gate:
		return false
	case a.Queue != nil && *a.Queue != *b.Queue:
		return false
	}
	return true
}

// gormRows runs the auditor's statements (audit.New) through the service's gorm pool.
type gormRows struct{ db *gorm.DB }

func (g gormRows) QueryContext(ctx context.Context, query string, args ...any) (audit.Rows, error) {
	rows, err := g.db.WithContext(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, err
	}
	return rows, nil
}
