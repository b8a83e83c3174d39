package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
)

// Gate is the report's part a CI job reads: how the run reached the deployment, its audit, its thresholds.
type Gate struct {
	// Deployment says what -header and -tls-* changed (header names only); empty: nothing.
	Deployment string `json:"deployment,omitempty"`
	// ExistingProduct is the product -product named, as it was before the first attack.
	ExistingProduct *ExistingProduct  `json:"existing_product,omitempty"`
	AuditSource     AuditSource       `json:"audit_source"`
	Thresholds      []ThresholdResult `json:"thresholds,omitempty"`
}

// ExistingProduct is a -product the run bought, as it was before the run.
type ExistingProduct struct {
	ID           int64  `json:"id"`
	Strategy     string `json:"strategy"`
	InitialStock int64  `json:"initial_stock"`
	StockAtStart int64  `json:"stock_at_start"`
}

// newGate fills the report's Gate once the rounds are summarized.
func newGate(cfg Config, aud *auditor, existing *ExistingProduct, summary []SummaryRow, rounds [][]RunReport) Gate {
	return Gate{Deployment: cfg.Deploy.describe(), ExistingProduct: existing, AuditSource: aud.source,
		Thresholds: cfg.Thresholds.judge(summary, rounds)}
}

// err is ErrThresholds naming each breach, or nil.
func (g Gate) err() error { return thresholdsErr(g.Thresholds) }

// printGate writes g after the report: the deployment, the existing product, which audit
// ran and what it proves, and the thresholds.
func printGate(w io.Writer, g Gate) {
	if g.Deployment != "" {
		fmt.Fprintf(w, "deployment    %s\n", g.Deployment)
	}
	if p := g.ExistingProduct; p != nil {
		fmt.Fprintf(w, "product       bought existing product %d (%s): stock %d of %d at the start; earlier orders are not this run's\n",
			p.ID, p.Strategy, p.StockAtStart, p.InitialStock)
	}
	g.AuditSource.print(w)
	printThresholds(w, g.Thresholds)
}

// resolveProduct reads the product -product names (cfg.Deploy.Product) through the API and
// makes cfg buy it: its strategy and the stock it has left. A product that is missing, sold
// out or of a strategy loadtest does not attack is refused with a message saying so; nil and
// nothing done without -product.
func resolveProduct(ctx context.Context, cfg *Config) (*ExistingProduct, error) {
	id := cfg.Deploy.Product
	if id == 0 {
		return nil, nil
	}
	target := cfg.Targets[0]
	p, err := cfg.Deploy.apiClient(target, cfg.AdminToken).Product(ctx, id)
	var prob *api.Problem
	switch {
	case errors.As(err, &prob) && prob.Code == api.CodeProductNotFound:
		return nil, UsageError{fmt.Errorf("-product %d: %s has no such product", id, target)}
	case err != nil:
		return nil, fmt.Errorf("-product %d: read it on %s: %w", id, target, err)
	}
	strategy := p.Strategy
	if p.Fair {
		strategy = FairStrategy
	}
	switch {
	case !slices.Contains(Strategies, p.Strategy) || p.Lock != "":
		return nil, UsageError{fmt.Errorf("-product %d: its strategy is %q, not one loadtest attacks (%v)", id, p.Strategy, Strategies)}
	case p.Stock <= 0:
		return nil, UsageError{fmt.Errorf("-product %d is not on sale: sold out (stock %d of %d); nothing to buy "+
			"(loadtest baseline measures a sold-out product)", id, p.Stock, p.InitialStock)}
	}
	cfg.Strategies, cfg.Stock, cfg.ThinkMS = []string{strategy}, int64(p.Stock), p.ThinkMS
	return &ExistingProduct{ID: id, Strategy: strategy, InitialStock: int64(p.InitialStock), StockAtStart: int64(p.Stock)}, nil
}

// product returns the product to attack for it: a fresh one of stock, created through c,
// or with -product the existing one, whose orders so far the auditor notes first, so that
// the verdict counts the run's alone. It returns the stock the attack may sell.
func (s *session) product(ctx context.Context, c *client.Client, it Item, stock int64) (api.Product, int64, error) {
	cfg := s.cfg
	if id := cfg.Deploy.Product; id != 0 {
		p, err := c.Product(ctx, id)
		if err != nil {
			return api.Product{}, 0, fmt.Errorf("-product %d: read it on %s: %w", id, it.Targets[0], err)
		}
		if err := s.aud.noteBefore(ctx, c, id, it.Strategy); err != nil {
			return api.Product{}, 0, err
		}
		return p, int64(p.Stock), nil
	}
	p, err := c.CreateProduct(ctx, api.NewProduct{
		Name: "loadtest " + it.Name + " " + time.Now().UTC().Format(time.RFC3339), Stock: new(int(stock)),
		Strategy: strings.TrimSuffix(it.Strategy, "-fair"), ThinkMS: cfg.ThinkMS, Fair: it.Strategy == FairStrategy,
		PayWithinMS: int(cfg.Abandon.PayWithin.Milliseconds()), // 0 unless -pay-within
		StartsAt:    cfg.startsAt(time.Now()),                  // nil unless -model opening
		Line:        cfg.line(),                                // nil unless -line-rate
	})
	if err != nil {
		return api.Product{}, 0, fmt.Errorf("create product on %s: %w", it.Targets[0], err)
	}
	return p, stock, nil
}

// validateGate reports what is wrong with the deployment's, the audit's and the thresholds'
// parts of c.
func (c *Config) validateGate() error {
	errs := []error{c.Thresholds.validate(c.Timeout)}
	if c.Deploy.Product < 0 {
		errs = append(errs, fmt.Errorf("-product %d: want a product id", c.Deploy.Product))
	}
	if c.Deploy.Product != 0 && c.Cmd != "run" {
		errs = append(errs, fmt.Errorf("-product: only run buys an existing product; %s makes its own", c.Cmd))
	}
	if c.Deploy.Product != 0 && c.Check {
		errs = append(errs, errors.New("-product with -check: the checker models a sale from its first unit, and an existing product's earlier orders are not in the history"))
	}
	if !slices.Contains([]string{"", AuditAuto, AuditDatabase, AuditAPI}, c.AuditMode) {
		errs = append(errs, fmt.Errorf("-audit %q: want %s, %s or %s", c.AuditMode, AuditAuto, AuditDatabase, AuditAPI))
	}
	if c.AuditMode == AuditDatabase && c.DatabaseURL == "" {
		errs = append(errs, errors.New("-audit database: needs -database-url (or DATABASE_URL)"))
	}
	return errors.Join(errs...)
}
