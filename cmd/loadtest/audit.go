package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/db"
)

// pgAudit is what PostgreSQL itself says about a product after an attack.
type pgAudit struct {
	InitialStock  int64 `json:"initial_stock"`
	Stock         int64 `json:"stock"`
	Orders        int64 `json:"orders"`
	DistinctUsers int64 `json:"distinct_users"`
	// Oversold is how many orders exceed the initial stock.
	Oversold int64 `json:"oversold"`
	// Duplicates is how many orders repeat a user who already has one.
	Duplicates int64 `json:"duplicates"`
	// Consistent: every unit that left the stock is one order, and no more.
	Consistent bool `json:"consistent"`
}

// redisAudit is what Redis says about a product of the redis strategy.
type redisAudit struct {
	Stock        int64 `json:"stock"`
	StockPresent bool  `json:"stock_present"`
	Buyers       int64 `json:"buyers"`
	// Agrees: the gate's stock equals PostgreSQL's and its buyers set has one member per order.
	Agrees bool `json:"agrees"`
}

// auditReport gathers the three audits of one product.
type auditReport struct {
	API      *apiAudit   `json:"api,omitempty"`
	Postgres *pgAudit    `json:"postgres,omitempty"`
	Redis    *redisAudit `json:"redis,omitempty"`
	// Errors lists audits that could not be made; each makes the verdict fail.
	Errors []string `json:"errors,omitempty"`
}

// auditor reads PostgreSQL and Redis directly, beside the API's own audit. A nil pool or
// client skips that audit. It is safe for concurrent use.
type auditor struct {
	pg     *sql.DB
	rdb    redis.UniversalClient
	prefix string
}

// newAuditor connects to what cfg names and checks both answer, so that a wrong URL fails
// before the attack rather than after it.
func newAuditor(ctx context.Context, cfg config) (*auditor, error) {
	a := &auditor{prefix: cfg.redisPrefix}
	if cfg.databaseURL != "" {
		gdb, err := db.Open(cfg.databaseURL, db.PoolOptions{MaxOpen: 2})
		if err != nil {
			return nil, err
		}
		if a.pg, err = gdb.DB(); err != nil {
			return nil, err
		}
		if err := a.pg.PingContext(ctx); err != nil {
			a.close()
			return nil, fmt.Errorf("PostgreSQL for the audit (-database-url, empty skips it): %w", err)
		}
	}
	if cfg.redisAddr != "" {
		// One address: that server; several: the nodes of a Redis Cluster, as for the API.
		a.rdb = redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(cfg.redisAddr, ",")})
		if err := a.rdb.Ping(ctx).Err(); err != nil {
			a.close()
			return nil, fmt.Errorf("redis for the audit (-redis-addr, empty skips it): %w", err)
		}
	}
	return a, nil
}

func (a *auditor) close() {
	if a.pg != nil {
		a.pg.Close()
	}
	if a.rdb != nil {
		a.rdb.Close()
	}
}

// audit asks the API and then PostgreSQL and Redis directly about product id.
func (a *auditor) audit(ctx context.Context, api *apiClient, id int64, strategy string) auditReport {
	var r auditReport
	fail := func(err error) { r.Errors = append(r.Errors, err.Error()) }
	if got, err := api.audit(ctx, id); err != nil {
		fail(err)
	} else {
		r.API = &got
	}
	if a.pg != nil {
		if got, err := a.postgres(ctx, id); err != nil {
			fail(err)
		} else {
			r.Postgres = &got
		}
	}
	if a.rdb != nil && strategy == "redis" {
		if got, err := a.redis(ctx, id, r.Postgres); err != nil {
			fail(err)
		} else {
			r.Redis = &got
		}
	}
	return r
}

const pgAuditQuery = `
SELECT p.initial_stock, p.stock,
       (SELECT count(*) FROM orders o WHERE o.product_id = p.id),
       (SELECT count(DISTINCT o.user_id) FROM orders o WHERE o.product_id = p.id)
  FROM products p
 WHERE p.id = $1`

func (a *auditor) postgres(ctx context.Context, id int64) (pgAudit, error) {
	var g pgAudit
	err := a.pg.QueryRowContext(ctx, pgAuditQuery, id).Scan(&g.InitialStock, &g.Stock, &g.Orders, &g.DistinctUsers)
	if err != nil {
		return g, fmt.Errorf("audit product %d in PostgreSQL: %w", id, err)
	}
	g.Oversold = max(0, g.Orders-g.InitialStock)
	g.Duplicates = g.Orders - g.DistinctUsers
	g.Consistent = g.Orders == g.InitialStock-g.Stock && g.Stock >= 0 && g.Duplicates == 0 && g.Oversold == 0
	return g, nil
}

// redisKey is the key of product id's gate, as the API names it: <prefix>:{p:ID}:<what>.
func redisKey(prefix string, id int64, what string) string {
	return prefix + ":{p:" + strconv.FormatInt(id, 10) + "}:" + what
}

// redis reads the gate of product id and compares it with pg (when known).
func (a *auditor) redis(ctx context.Context, id int64, pg *pgAudit) (redisAudit, error) {
	var g redisAudit
	stock, err := a.rdb.Get(ctx, redisKey(a.prefix, id, "stock")).Int64()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return g, fmt.Errorf("audit product %d in Redis: %w", id, err)
	default:
		g.Stock, g.StockPresent = stock, true
	}
	if g.Buyers, err = a.rdb.SCard(ctx, redisKey(a.prefix, id, "buyers")).Result(); err != nil {
		return g, fmt.Errorf("audit product %d in Redis: %w", id, err)
	}
	g.Agrees = pg != nil && g.StockPresent && g.Stock == pg.Stock && g.Buyers == pg.Orders
	return g, nil
}

// verdict is the judgement of one run.
type verdict struct {
	OK       bool     `json:"ok"`
	Label    string   `json:"label"`
	Problems []string `json:"problems,omitempty"`
}

// judge decides whether a run kept the promise. A safe strategy must not oversell, sell a
// user twice or leave an inconsistent audit; every strategy must have one order per bought
// answer; naive, when expectNaive, must oversell (else the scenario proves nothing).
func judge(strategy string, st runStats, a auditReport, expectNaive bool) verdict {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, e := range a.Errors {
		bad("audit failed: %s", e)
	}
	orders, oversold := int64(-1), int64(0)
	if api := a.API; api != nil {
		orders, oversold = api.Orders, api.Oversold
		if isSafe(strategy) {
			unsafe(bad, "API audit", api.Oversold, api.DuplicateUsers, api.Consistent, api.Orders, api.InitialStock, api.Stock)
			if strategy == "redis" && (api.Redis == nil || !api.Redis.Agrees) {
				bad("API audit: Redis gate and PostgreSQL disagree")
			}
		}
	}
	if pg := a.Postgres; pg != nil {
		if a.API != nil && (pg.Orders != a.API.Orders || pg.Stock != a.API.Stock || pg.InitialStock != a.API.InitialStock) {
			bad("API audit (orders %d, stock %d) and PostgreSQL (orders %d, stock %d) disagree",
				a.API.Orders, a.API.Stock, pg.Orders, pg.Stock)
		}
		orders, oversold = pg.Orders, max(oversold, pg.Oversold)
		if isSafe(strategy) {
			unsafe(bad, "PostgreSQL", pg.Oversold, pg.Duplicates, pg.Consistent, pg.Orders, pg.InitialStock, pg.Stock)
		}
	}
	if r := a.Redis; r != nil && !r.Agrees && isSafe(strategy) {
		bad("Redis gate (stock %d present=%v, buyers %d) disagrees with PostgreSQL", r.Stock, r.StockPresent, r.Buyers)
	}
	if orders >= 0 {
		boughtN := st.Outcomes[bought]
		unknown := st.Outcomes[transportError] + st.Outcomes[serverError] + st.Outcomes[unexpected]
		switch {
		case boughtN > orders:
			bad("%d purchases answered 201 but only %d orders exist", boughtN, orders)
		case orders > boughtN+unknown:
			bad("%d orders exist but only %d purchases answered 201 (and %d had no clear answer)", orders, boughtN, unknown)
		}
	}
	v := verdict{Problems: problems}
	switch {
	case !isSafe(strategy) && expectNaive && oversold == 0:
		v.Problems = append(v.Problems, "naive did not oversell: the scenario proves nothing (raise -think-ms or -workers)")
	case !isSafe(strategy) && oversold > 0:
		v.Label = "OVERSOLD (expected)"
	case !isSafe(strategy):
		v.Label = "no oversell"
	}
	v.OK = len(v.Problems) == 0
	if !v.OK {
		v.Label = "FAIL"
	} else if v.Label == "" {
		v.Label = "PASS"
	}
	return v
}

// unsafe reports, through bad, what one audit source (the API's or PostgreSQL's) shows that a
// safe strategy must never do: oversell, sell a user twice, or leave orders and stock apart.
func unsafe(bad func(string, ...any), source string, oversold, dupes int64, consistent bool, orders, initial, stock int64) {
	if oversold > 0 {
		bad("%s: oversold %d", source, oversold)
	}
	if dupes > 0 {
		bad("%s: %d users bought twice", source, dupes)
	}
	if !consistent {
		bad("%s: inconsistent (orders %d, initial %d, stock %d)", source, orders, initial, stock)
	}
}
