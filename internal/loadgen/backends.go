package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The lock backends side by side (compare -etcd-targets, -zookeeper-targets): which targets
// take their locks where, and what etcd's and ZooKeeper's figures are against Redis's in the
// same rounds.

// lockChecks are the lock backends beside Redis by the check an API's GET /readyz lists
// exactly when its product locks are in them (LOCK_BACKEND; internal/app, withLockCheck).
var lockChecks = []string{BackendEtcd, BackendZooKeeper}

// lockBackend returns where the API at target takes the dlock strategy's product locks, as
// its GET /readyz shows: BackendEtcd when it lists an "etcd" check, BackendZooKeeper for a
// "zookeeper" one, BackendRedis otherwise (Redis, or Redlock over several Redis servers).
func lockBackend(ctx context.Context, d Deployment, target string) (string, error) {
	r, err := d.apiClient(target, "").Readiness(ctx)
	if err != nil {
		return "", fmt.Errorf("lock backend of %s: %w", target, err)
	}
	if r.Checks == nil {
		return "", fmt.Errorf("lock backend of %s: GET /readyz has no readiness body with checks: is it a seckill API?", target)
	}
	for _, b := range lockChecks {
		if _, ok := r.Checks[b]; ok {
			return b, nil
		}
	}
	return BackendRedis, nil
}

// checkBackends makes sure that every target of each backend of others takes its locks there
// and every other target in Redis, so that "dlock (etcd)" and "dlock (redis)" are what they
// say. A target on the wrong backend is a UsageError naming it.
func checkBackends(ctx context.Context, d Deployment, targets []string, others []backendTargets) error {
	var wrong, failed []error
	check := func(flag, target, want string) {
		got, err := lockBackend(ctx, d, target)
		switch {
		case err != nil:
			failed = append(failed, err)
		case got == want:
		case got == BackendRedis:
			wrong = append(wrong, fmt.Errorf("%s: %s takes its locks in Redis: its /readyz lists no %q check; "+
				"%s are APIs started with LOCK_BACKEND=%s and %s", flag, target, want, flag, want, storeEnv[want]))
		case want == BackendRedis:
			wrong = append(wrong, fmt.Errorf("%s: %s takes its locks in %s: its /readyz lists an %q check; "+
				"beside %s, -targets are APIs whose locks are in Redis (LOCK_BACKEND=redis, the default)",
				flag, target, got, got, backendFlags(others)))
		default:
			wrong = append(wrong, fmt.Errorf("%s: %s takes its locks in %s: its /readyz lists the %q check, not %q",
				flag, target, got, got, want))
		}
	}
	for _, b := range others {
		for _, t := range b.targets {
			check(b.flag, t, b.backend)
		}
	}
	for _, t := range targets {
		check("-targets", t, BackendRedis)
	}
	if len(failed) > 0 {
		return errors.Join(append(failed, wrong...)...)
	}
	if len(wrong) > 0 {
		return UsageError{errors.Join(wrong...)}
	}
	return nil
}

// storeEnv is the variable naming the servers of each lock backend beside Redis.
var storeEnv = map[string]string{BackendEtcd: "ETCD_ENDPOINTS", BackendZooKeeper: "ZOOKEEPER_SERVERS"}

// backendFlags names the flags of others: "-etcd-targets and -zookeeper-targets".
func backendFlags(others []backendTargets) string {
	flags := make([]string, len(others))
	for i, b := range others {
		flags[i] = b.flag
	}
	return strings.Join(flags, " and ")
}

// BackendRatio is each figure's median per-round ratio to Redis's; 0 where Redis's was 0.
type BackendRatio struct {
	OrdersPerSec float64 `json:"orders_per_sec"`
	P99          float64 `json:"p99"`
	P99Bought    float64 `json:"p99_bought"`
}

// compareBackends sets VsRedis on each row of a strategy on etcd or ZooKeeper, from rounds.
func compareBackends(rows []SummaryRow, rounds [][]RunReport) {
	for i, row := range rows {
		if row.Backend == "" || row.Backend == BackendRedis {
			continue
		}
		other := func(r RunReport) bool { return r.Name == row.Name }
		redis := func(r RunReport) bool { return r.Strategy == row.Strategy && r.Backend == BackendRedis }
		ratio := func(f func(RunReport) float64) float64 { return MedianRatio(rounds, other, redis, f, f) }
		rows[i].VsRedis = &BackendRatio{
			OrdersPerSec: ratio(func(r RunReport) float64 { return r.Stats.OrdersPerSec }),
			P99:          ratio(func(r RunReport) float64 { return r.Stats.Latency.P99 }),
			P99Bought:    ratio(func(r RunReport) float64 { return r.Stats.ByOutcome[Bought.String()].P99 }),
		}
	}
}

// MedianRatio returns the median per-round num(a)/den(b), skipping rounds without both; 0 if none.
func MedianRatio(rounds [][]RunReport, isA, isB func(RunReport) bool, num, den func(RunReport) float64) float64 {
	var ratios []float64
	for _, round := range rounds {
		a, b := slices.IndexFunc(round, isA), slices.IndexFunc(round, isB)
		if a < 0 || b < 0 {
			continue
		}
		if d := den(round[b]); d > 0 {
			ratios = append(ratios, num(round[a])/d)
		}
	}
	return median(ratios)
}

// backendsLine says, in one line, what each strategy on etcd or ZooKeeper measured against
// the same strategy on Redis; empty when the run compared no backends.
func backendsLine(rows []SummaryRow) string {
	var parts []string
	for _, e := range rows {
		if e.VsRedis == nil {
			continue
		}
		var r SummaryRow
		for _, row := range rows {
			if row.Strategy == e.Strategy && row.Backend == BackendRedis {
				r = row
			}
		}
		v := e.VsRedis
		if e.Runs == 1 {
			parts = append(parts, fmt.Sprintf("%s on %s / on Redis: orders/s %.0f / %.0f = %s, p99 %s / %s = %s, p99 buy %s / %s = %s",
				e.Strategy, storeName(e.Backend), e.OrdersPerSec, r.OrdersPerSec, times(v.OrdersPerSec), fmtMS(e.P99), fmtMS(r.P99), times(v.P99),
				dashIfZero(e.P99Bought), dashIfZero(r.P99Bought), times(v.P99Bought)))
			continue
		}
		// The medians of each backend's figures need not divide into the median of the ratios.
		parts = append(parts, fmt.Sprintf("%s on %s / on Redis, each round's ratio, median of %d: orders/s %s, p99 %s, p99 buy %s",
			e.Strategy, storeName(e.Backend), e.Runs, times(v.OrdersPerSec), times(v.P99), times(v.P99Bought)))
	}
	return strings.Join(parts, "; ")
}

// storeName is how the reports name backend's store: "etcd", "ZooKeeper".
func storeName(backend string) string {
	if backend == BackendZooKeeper {
		return "ZooKeeper"
	}
	return backend
}

// times writes a ratio as a factor, "-" for none.
func times(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}
