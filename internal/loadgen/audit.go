package loadgen

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/keys"
)

// auditReport gathers what the API and the direct audit say about one product.
type auditReport struct {
	// API is the service's own audit, GET /api/v1/products/{id}/audit.
	API *api.Audit `json:"api,omitempty"`
	// Direct is the independent audit (internal/audit); nil without -database-url.
	Direct *audit.Sale `json:"direct,omitempty"`
	// Errors lists audits that could not be made; each makes the verdict fail.
	Errors []string `json:"errors,omitempty"`
	// OrdersBefore are a -product's orders before the run.
	OrdersBefore int64 `json:"orders_before,omitempty"`
	// Ended are an abandonment sale's expired or cancelled reservations.
	Ended int64 `json:"ended,omitempty"`
	// Buyers holds the answers to PostgreSQL's orders buyer by buyer; nil without PostgreSQL.
	Buyers *buyersAudit `json:"buyers,omitempty"`
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

// Audit modes (-audit): which audits run beside the API's own, which always runs.
const (
	AuditAuto     = "auto"     // PostgreSQL (and Redis) read directly when PostgreSQL answers, else the API's alone
	AuditDatabase = "database" // PostgreSQL (and Redis) read directly; PostgreSQL must answer
	AuditAPI      = "api"      // the API's alone
)

// Which audit ran, as AuditSource.Ran says it.
const (
	ranDatabase = "database"
	ranAPI      = "api"
)

// AuditSource says, in the report, which audit ran and what it can and cannot prove.
type AuditSource struct {
	// Ran is "database" (read directly too) or "api" (the API's audit alone).
	Ran string `json:"ran"`
	// Why says why the database was not read (Ran "api"), or what of it was not (Redis).
	Why         string `json:"why,omitempty"`
	Proves      string `json:"proves"`
	CannotProve string `json:"cannot_prove"`
}

func databaseSource(why string) AuditSource {
	return AuditSource{Ran: ranDatabase, Why: why,
		Proves: "from PostgreSQL's rows (and Redis's gate or queue) read by loadtest itself, not by the service: no order beyond the " +
			"initial stock, no user with two orders, orders = initial stock - stock; buyer by buyer, that each 201 and " +
			"already_purchased named an order of its own buyer, each buyer answered 201, 202 or already_purchased has an order, " +
			"and each order made in the run was made by a request of its buyer answered 201 or 202 or left unclear (none behind " +
			"an answer that says nothing was written); and that the service's own audit says the same",
		CannotProve: "that each answer was true when it was given, against the others (-check orders the history), nor anything " +
			"of a database other than the one -database-url names"}
}

func apiSource(why string) AuditSource {
	return AuditSource{Ran: ranAPI, Why: why,
		Proves: "the same figures as the service computes them from its own PostgreSQL (and Redis) on request: no oversell, " +
			"no user with two orders, orders = sold, and as many orders as buyers answered 201 or 202 (a count, not buyer by buyer)",
		CannotProve: "anything the service under test would get wrong or hide: it trusts the service's audit, its database and its " +
			"counting, and a count lets a false 201 and an order hidden behind a busy cancel out; give loadtest -database-url " +
			"to read the rows itself and check each buyer"}
}

func (s AuditSource) print(w io.Writer) {
	why := ""
	if s.Why != "" {
		why = " (" + s.Why + ")"
	}
	fmt.Fprintf(w, "audit source  %s%s\n  proves:      %s\n  cannot:      %s\n", s.Ran, why, s.Proves, s.CannotProve)
}

// auditor reads PostgreSQL and Redis directly, beside the API's own audit. A nil pool or
// client skips what needs it: the direct audit needs PostgreSQL, and reads the gate when it
// also has Redis. It is safe for concurrent use.
type auditor struct {
	pg     *sql.DB
	rdb    redis.UniversalClient
	direct *audit.Auditor // nil without PostgreSQL
	source AuditSource
	// before holds, per existing product (-product), its orders before the run, as the audit
	// that the verdict reads counts them, and beforeIDs their ids when PostgreSQL is read
	// (see noteBefore).
	mu        sync.Mutex
	before    map[int64]int64
	beforeIDs map[int64]map[int64]bool
}

// newAuditor connects to what cfg names and checks both answer, so that a wrong URL fails
// before the attack rather than after it. With -audit auto (the default), PostgreSQL out of
// reach leaves the API's audit alone, and Redis out of reach the direct audit without Redis;
// with -audit database, either is an error.
func newAuditor(ctx context.Context, cfg Config) (*auditor, error) {
	a := &auditor{before: map[int64]int64{}, beforeIDs: map[int64]map[int64]bool{}}
	strict := cfg.AuditMode == AuditDatabase
	switch {
	case cfg.AuditMode == AuditAPI:
		a.source = apiSource("-audit api")
		return a, nil
	case cfg.DatabaseURL == "":
		a.source = apiSource("no -database-url or DATABASE_URL")
		return a, nil
	}
	if err := a.openPostgres(ctx, cfg.DatabaseURL); err != nil {
		a.close()
		a.pg = nil
		if strict {
			return nil, fmt.Errorf("PostgreSQL for the audit (-database-url; -audit api skips it): %w", err)
		}
		a.source = apiSource(fmt.Sprintf("PostgreSQL out of reach: %v", err))
		return a, nil
	}
	a.source = databaseSource("")
	if cfg.RedisAddr != "" {
		// One address: that server; several: the nodes of a Redis Cluster, as for the API.
		a.rdb = redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(cfg.RedisAddr, ",")})
		if err := a.rdb.Ping(ctx).Err(); err != nil {
			if strict {
				a.close()
				return nil, fmt.Errorf("redis for the audit (-redis-addr, empty skips it): %w", err)
			}
			a.rdb.Close()
			a.rdb = nil
			a.source.Why = fmt.Sprintf("Redis out of reach, its gate and queue not read directly: %v", err)
		}
	}
	a.direct = audit.New(a.pg, a.rdb, keys.Keys{Prefix: cfg.RedisPrefix})
	return a, nil
}

// openPostgres opens a pool of PostgreSQL at url and checks it answers.
func (a *auditor) openPostgres(ctx context.Context, url string) error {
	var err error
	if a.pg, err = openPostgres(url, 2); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return a.pg.PingContext(ctx)
}

// noteBefore audits existing product id before the run, and keeps its orders as the audit
// the verdict reads counts them (PostgreSQL's when read, else the API's).
func (a *auditor) noteBefore(ctx context.Context, c *client.Client, id int64, strategy string) error {
	r := a.audit(ctx, c, id, strategy, nil)
	if len(r.Errors) > 0 {
		return fmt.Errorf("-product %d: audit it before the run: %s", id, strings.Join(r.Errors, "; "))
	}
	orders := int64(r.API.Orders)
	if r.Direct != nil {
		orders = r.Direct.Orders
	}
	ids := map[int64]bool{}
	if a.direct != nil {
		byUser, err := a.orders(ctx, id)
		if err != nil {
			return fmt.Errorf("-product %d: audit it before the run: %w", id, err)
		}
		for _, mine := range byUser {
			for _, o := range mine {
				ids[o] = true
			}
		}
	}
	a.mu.Lock()
	a.before[id], a.beforeIDs[id] = orders, ids
	a.mu.Unlock()
	return nil
}

// orders reads every order of product id in PostgreSQL, of any status: user → order ids,
// oldest first.
func (a *auditor) orders(ctx context.Context, id int64) (map[int64][]int64, error) {
	rows, err := a.pg.QueryContext(ctx, `SELECT user_id, id FROM orders WHERE product_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("orders of product %d: %w", id, err)
	}
	defer rows.Close()
	orders := map[int64][]int64{}
	for rows.Next() {
		var u, o int64
		if err := rows.Scan(&u, &o); err != nil {
			return nil, fmt.Errorf("orders of product %d: %w", id, err)
		}
		orders[u] = append(orders[u], o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("orders of product %d: %w", id, err)
	}
	return orders, nil
}

func (a *auditor) close() {
	if a.pg != nil {
		a.pg.Close()
	}
	if a.rdb != nil {
		a.rdb.Close()
	}
}

// audit asks the API and then PostgreSQL and Redis directly about product id, and, when it
// reads PostgreSQL, holds the answers log recorded (nil: none) to the product's orders.
func (a *auditor) audit(ctx context.Context, c *client.Client, id int64, strategy string, log *purchaseLog) auditReport {
	var r auditReport
	if got, err := c.Audit(ctx, id); err != nil {
		r.Errors = append(r.Errors, fmt.Sprintf("audit product %d through the API: %v", id, err))
	} else {
		r.API = &got
	}
	a.mu.Lock()
	r.OrdersBefore = a.before[id]
	before := a.beforeIDs[id]
	a.mu.Unlock()
	if a.direct == nil {
		return r
	}
	// The gate of a redis product; the gate and streams of a queue product (Direct.Queue).
	if got, err := a.direct.Sale(ctx, id, strategy == "redis" || strategy == QueueStrategy); err != nil {
		r.Errors = append(r.Errors, err.Error())
	} else {
		r.Direct = &got
	}
	if log != nil {
		if orders, err := a.orders(ctx, id); err != nil {
			r.Errors = append(r.Errors, err.Error())
		} else {
			r.Buyers = log.checkBuyers(orders, before)
		}
	}
	return r
}
