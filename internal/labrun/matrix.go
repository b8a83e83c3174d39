package labrun

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/keys"
	"github.com/seckill/seckill/internal/procs"
)

// Config is one run of the lab.
type Config struct {
	Cells []Pair // lock and scenario, in order
	// APIBin is the lab build of cmd/api (go build -tags lab ./cmd/api; make build's
	// bin/labapi) that the runner starts, three processes at a time.
	APIBin string
	// DatabaseURL and RedisAddr are what the API processes and the audit use; Prefix is the
	// processes' REDIS_KEY_PREFIX (default: "lab-" and 8 random characters).
	DatabaseURL, RedisAddr, Prefix string
	// EtcdEndpoints is the processes' ETCD_ENDPOINTS, the etcd lock's etcd; empty: they have
	// none, and the etcd lock's cells get only 503s.
	EtcdEndpoints string
	DB            *sql.DB               // the audit's PostgreSQL (DatabaseURL)
	Redis         redis.UniversalClient // the runner's Redis (RedisAddr)
	// Progress, when set, gets a live line per cell.
	Progress io.Writer
	// Logf reports what the processes printed when they failed; nil: nowhere.
	Logf func(format string, args ...any)
	// Watch, when set, is told of each cell as it goes (loadtest ui draws it live).
	Watch Watcher
	// HistoryDir is where the processes record their lock history (LOCK_HISTORY, removed
	// when the run ends) and where the checker writes its page of each history that is not
	// linearizable; empty: a new directory under os.TempDir(), left only if it holds a page.
	HistoryDir string
}

// Watcher is told what a run does while it goes: a cell begins, a sample of its sale, the
// cell's result. Its methods are called one cell at a time, from the run's goroutines.
type Watcher interface {
	CellBegan(p Pair, initialStock int, expected string)
	Sampled(p Pair, pt Point)
	CellDone(c Cell)
}

// Pair names a cell.
type Pair struct{ Lock, Scenario string }

// Cells returns the pairs of locks × scenarios, in the matrix's order.
func Cells(locks, scenarios []string) []Pair {
	var out []Pair
	for _, l := range locks {
		for _, s := range scenarios {
			out = append(out, Pair{l, s})
		}
	}
	return out
}

// ShortCells is the matrix `make test` runs (Short).
func ShortCells() []Pair {
	out := make([]Pair, len(Short))
	for i, p := range Short {
		out[i] = Pair{p[0], p[1]}
	}
	return out
}

// Result is a run of the lab.
type Result struct {
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	Cells   []Cell    `json:"cells"`
}

// OK reports whether every cell came out as expected.
func (r Result) OK() bool {
	for _, c := range r.Cells {
		if !c.OK() {
			return false
		}
	}
	return len(r.Cells) > 0
}

// run is the state of one Run: three API processes, kept three between cells.
type run struct {
	cfg   Config
	env   map[string]string
	token string
	apis  []*procs.API
	// retired are processes that exited mid-run (killed) and were replaced (startAPI).
	retired []*procs.API
	rdb     redis.UniversalClient
	// sentinels is a failover cell's Redis (see onSentinels); nil otherwise.
	sentinels *procs.Sentinels
	zk        *procs.ZooKeeperEnsemble // the zookeeper locks' (zookeeper.go); nil: no such cell
	netns     []*netnsProc             // the processes' namespaces, when a partition cell needs them
	// netnsErr says why the processes run without namespaces although a cell needs them.
	netnsErr error
	auditor  *audit.Auditor
	hc       *http.Client
	pmu      sync.Mutex // serialises the progress line's writers
	// historyDir holds the processes' lock history, and the checker's pages (see history.go).
	historyDir string
}

// Run runs cfg's cells in order, each on a fresh product, and returns them. Its error is
// for a lab that could not run (processes, PostgreSQL, Redis); the cells say what the locks
// did.
func Run(ctx context.Context, cfg Config) (Result, error) {
	for _, p := range cfg.Cells {
		if _, ok := cellScenario(p); !ok || Expected[p.Lock] == nil {
			return Result{}, fmt.Errorf("no cell %s × %s", p.Lock, p.Scenario)
		}
	}
	token := rand.Text()
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = "lab-" + rand.Text()[:8]
	}
	r := &run{
		cfg: cfg, token: token, rdb: cfg.Redis,
		auditor: audit.New(cfg.DB, nil, keys.Keys{Prefix: prefix}),
		hc:      &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}},
		env: map[string]string{
			"DATABASE_URL": cfg.DatabaseURL, "REDIS_ADDR": cfg.RedisAddr, "REDIS_KEY_PREFIX": prefix,
			"ADMIN_TOKEN": token, "RATE_LIMIT_USER": "off", "RATE_LIMIT_ADDR": "off", "LOG_LEVEL": "warn",
		},
	}
	if cfg.EtcdEndpoints != "" {
		r.env["ETCD_ENDPOINTS"] = cfg.EtcdEndpoints
	}
	var err error
	if r.historyDir, err = historyDir(cfg); err != nil {
		return Result{}, fmt.Errorf("lock history: %w", err)
	}
	defer r.closeHistory()
	r.env["LOCK_HISTORY"] = lockHistory(r.historyDir)
	res := Result{Started: time.Now()}
	err = r.cells(ctx, &res)
	err = errors.Join(err, r.close())
	res.Seconds = time.Since(res.Started).Seconds()
	if err == nil {
		err = ctx.Err()
	}
	return res, err
}

func (r *run) progress(format string, args ...any) {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "\r\033[K"+format, args...)
	}
}

// cell runs one lock in one scenario on a fresh product. Its error is for a fault that could
// not be done to the processes (a signal, a partition), which ends the run.
func (r *run) cell(ctx context.Context, p Pair, label string) (c Cell, err error) {
	s, _ := cellScenario(p)
	c = Cell{Lock: p.Lock, Scenario: p.Scenario, Expected: Expected[p.Lock][p.Scenario], InitialStock: s.Stock}
	start := time.Now()
	defer func() { c.Seconds = time.Since(start).Seconds() }()
	admin := client.New(r.apis[0].Base, &client.Options{AdminToken: r.token, HTTPClient: r.hc})
	prod, err := admin.CreateProduct(ctx, api.NewProduct{
		Name: "lab " + p.Lock + " " + p.Scenario, Stock: &s.Stock, Strategy: "lab",
		ThinkMS: s.ThinkMS, Lock: p.Lock, LeaseMS: s.LeaseMS,
	})
	if err != nil {
		c.Error = "create product: " + err.Error()
		return c, nil
	}
	c.ProductID = prod.ID
	key := keys.Keys{Prefix: r.env["REDIS_KEY_PREFIX"]}.Lock(prod.ID)
	cr := &crowd{product: prod.ID, start: time.Now(), answers: map[string]int{}, users: map[int64]heard{}}
	for _, a := range r.apis {
		cr.clients = append(cr.clients, client.New(a.Base, &client.Options{HTTPClient: r.hc}))
	}
	sctx, stop := context.WithTimeout(ctx, s.timeout())
	defer stop()
	sampled := r.sample(sctx, cr, p, label)
	bought := make(chan struct{})
	go func() { cr.buy(sctx, s.Buyers); close(bought) }()
	if s.Fault != "" {
		if c.Fault, err = r.injure(sctx, s, p.Lock, key, cr); err != nil {
			stop()
			<-bought
			<-sampled
			return c, err
		}
	}
	<-bought
	end := time.Now()
	stop()
	c.Series = <-sampled
	sale, err := r.auditor.Sale(ctx, prod.ID, false)
	if err != nil {
		c.Error = "audit: " + err.Error()
		return c, nil
	}
	c.Stock, c.Orders = int(sale.Stock), int(sale.Orders)
	buyers, err := r.auditor.Buyers(ctx, prod.ID)
	if err != nil {
		c.Error = "audit: " + err.Error()
		return c, nil
	}
	c.Untrue = cr.untrue(buyers)
	c.Inversions = cr.inversions()
	c.Series = append(c.Series, Point{MS: end.Sub(cr.start).Milliseconds(), Orders: c.Orders, Stock: c.Stock})
	c.Answers = cr.answers
	c.OrdersPerSec, c.HandoffsPerSec = cr.rates()
	cr.mu.Lock()
	lastSale := cr.lastSale
	cr.mu.Unlock()
	if lastSale.IsZero() {
		lastSale = cr.start
	}
	judge(&c, lastSale, end)
	if c.Verdict == Stalled {
		c.StuckKey = keyState(ctx, r.rdb, key)
	}
	c.History, c.Timeline = r.checkHistory(c, key)
	return c, nil
}

// sample reads the sale's orders and stock from PostgreSQL every 100 ms until ctx ends,
// showing them on the progress line after label and to the watcher, and then sends the
// samples.
func (r *run) sample(ctx context.Context, cr *crowd, p Pair, label string) <-chan []Point {
	out := make(chan []Point, 1)
	go func() {
		var pts []Point
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if sale, err := r.auditor.Sale(ctx, cr.product, false); err == nil {
				pt := Point{MS: time.Since(cr.start).Milliseconds(), Orders: int(sale.Orders), Stock: int(sale.Stock)}
				pts = append(pts, pt)
				if w := r.cfg.Watch; w != nil {
					w.Sampled(p, pt)
				}
				r.progress("%s: %.1fs, %d orders, stock %d", label, float64(pt.MS)/1000, pt.Orders, pt.Stock)
			}
			select {
			case <-ctx.Done():
				out <- pts
				return
			case <-tick.C:
			}
		}
	}()
	return out
}
