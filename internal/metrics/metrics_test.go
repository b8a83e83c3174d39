package metrics_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/metrics"
	"github.com/seckill/seckill/internal/order"
)

func TestBuildInfo(t *testing.T) {
	build := buildinfo.Info{Version: "v1.2.0+dirty", Revision: "0123abcd", Time: "2026-01-02T15:04:05Z", Modified: true, GoVersion: "go1.26.8"}
	rec := httptest.NewRecorder()
	metrics.New(nil, nil, build).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if want := `seckill_build_info{go_version="go1.26.8",revision="0123abcd",version="v1.2.0+dirty"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s; got:\n%s", want, body)
	}
}

// scrape returns what m's /metrics answers.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	return string(body)
}

// TestKnownSeriesAtZero: the labelled counters that alerts read are exported at 0 before
// their first event, so that the event's step from 0 to 1 is seen by increase().
func TestKnownSeriesAtZero(t *testing.T) {
	t.Parallel()
	body := scrape(t, metrics.New(nil, nil, buildinfo.Info{}))
	for _, want := range []string{
		`seckill_purchases_total{outcome="outcome_unknown",strategy="dlock"} 0`,
		`seckill_purchases_total{outcome="unavailable",strategy="queue"} 0`,
		`seckill_purchases_total{outcome="busy",strategy="bundle"} 0`,
		`seckill_commits_settled_total{result="unknown"} 0`,
		`seckill_queue_dead_lettered_total{reason="failed"} 0`,
		`seckill_queue_dead_lettered_total{reason="sold_out"} 0`,
		`seckill_rate_limiter_errors_total{scope="user"} 0`,
		`seckill_purchases_shed_total{strategy="pessimistic"} 0`,
		`seckill_reservation_returns_total{reason="expired"} 0`,
		`seckill_gate_reconciled_total{result="given_back"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestOutcomesKnown: every outcome a purchase can be reported with is one of the labels
// exported at 0.
func TestOutcomesKnown(t *testing.T) {
	t.Parallel()
	for _, err := range []error{nil, order.ErrAccepted, order.ErrOutcomeUnknown, order.ErrCanceled, inventory.ErrSoldOut,
		order.ErrAlreadyPurchased, order.ErrBusy, inventory.ErrNotFound, order.ErrUnavailable, errors.New("a bug"),
		inventory.ErrNotStarted, inventory.ErrEnded} {
		if got := order.Outcome(err); !slices.Contains(metrics.PurchaseOutcomes, got) {
			t.Errorf("Outcome(%v) = %q, not in PurchaseOutcomes %v", err, got, metrics.PurchaseOutcomes)
		}
	}
	for _, s := range inventory.Strategies {
		if !slices.Contains(metrics.PurchaseStrategies, string(s)) {
			t.Errorf("strategy %s not in PurchaseStrategies", s)
		}
	}
}

// TestLatencyBuckets: the request and purchase histograms have a bound at the 250 ms
// objective and one above the longest purchase (WRITE_TIMEOUT, 40 s at most).
func TestLatencyBuckets(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil, buildinfo.Info{})
	m.Request("/api/v1/products/:id/purchase", "POST", 201, 30*time.Millisecond)
	m.Purchased(inventory.StrategyDlock, "bought", 30*time.Millisecond)
	body := scrape(t, m)
	for _, want := range []string{
		`seckill_http_request_duration_seconds_bucket{method="POST",route="/api/v1/products/:id/purchase",le="0.25"} 1`,
		`seckill_http_request_duration_seconds_bucket{method="POST",route="/api/v1/products/:id/purchase",le="45"} 1`,
		`seckill_purchase_duration_seconds_bucket{outcome="bought",strategy="dlock",le="0.25"} 1`,
		`seckill_purchase_duration_seconds_bucket{outcome="bought",strategy="dlock",le="45"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
