package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/inventory"
)

// auditReport gathers what the API and the direct audit say about one product.
type auditReport struct {
	// API is the service's own audit, GET /api/v1/products/{id}/audit.
	API *api.Audit `json:"api,omitempty"`
	// Direct is the independent audit (internal/audit): PostgreSQL read directly and, for the
	// redis strategy, the gate in Redis (Direct.Gate); for the queue strategy, the gate and
	// streams (Direct.Queue). Nil without -database-url.
	Direct *audit.Sale `json:"direct,omitempty"`
	// Errors lists audits that could not be made; each makes the verdict fail.
	Errors []string `json:"errors,omitempty"`
}

// apiSale is the API's audit in the figures of the direct one, which have the same meaning.
func apiSale(x *api.Audit) audit.Sale {
	s := audit.Sale{
		ProductID: x.ProductID, InitialStock: int64(x.InitialStock), Stock: int64(x.Stock), Orders: int64(x.Orders),
		Sold: int64(x.Sold), Oversold: int64(x.Oversold), DuplicateUsers: int64(x.DuplicateUsers), Consistent: x.Consistent,
	}
	if x.Redis != nil {
		s.Gate = new(audit.Gate(*x.Redis))
	}
	if x.Queue != nil {
		s.Queue = new(audit.Queue(*x.Queue))
	}
	return s
}

// auditor reads PostgreSQL and Redis directly, beside the API's own audit. A nil pool or
// client skips what needs it: the direct audit needs PostgreSQL, and reads the gate when it
// also has Redis. It is safe for concurrent use.
type auditor struct {
	pg     *sql.DB
	rdb    redis.UniversalClient
	direct *audit.Auditor // nil without PostgreSQL
}

// newAuditor connects to what cfg names and checks both answer, so that a wrong URL fails
// before the attack rather than after it.
func newAuditor(ctx context.Context, cfg config) (*auditor, error) {
	a := &auditor{}
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
	if a.pg != nil {
		a.direct = audit.New(a.pg, a.rdb, inventory.Keys{Prefix: cfg.redisPrefix})
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
func (a *auditor) audit(ctx context.Context, c *client.Client, id int64, strategy string) auditReport {
	var r auditReport
	if got, err := c.Audit(ctx, id); err != nil {
		r.Errors = append(r.Errors, fmt.Sprintf("audit product %d through the API: %v", id, err))
	} else {
		r.API = &got
	}
	if a.direct != nil {
		// The gate of a redis product; the gate and streams of a queue product (Direct.Queue).
		if got, err := a.direct.Sale(ctx, id, strategy == "redis" || strategy == queueStrategy); err != nil {
			r.Errors = append(r.Errors, err.Error())
		} else {
			r.Direct = &got
		}
	}
	return r
}
