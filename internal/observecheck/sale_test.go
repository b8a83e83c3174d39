package observecheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// mayBeEmpty lists the expressions that legitimately have no data during a short healthy
// sale, and why. Keys are a rule's name (record or alert; an alert's signals get "#1", "#2"
// in order) or a dashboard panel's title and legend. Any other expression must have data.
var mayBeEmpty = map[string]string{
	"SeckillReplicaNotReady":                                      "no replica answers /readyz with an error in a healthy sale",
	"SeckillOutcomeUnknown":                                       "no COMMIT goes unanswered in a healthy sale",
	"SeckillSettleUnknown":                                        "no COMMIT goes unanswered, so none is settled",
	"SeckillDeadLetters":                                          "no queued purchase is dead-lettered in a healthy sale",
	"Lock contention and losses/not obtained/s":                   "every lock is obtained in a healthy sale",
	"503s and unknown outcomes/outcome_unknown/s":                 "no COMMIT goes unanswered in a healthy sale",
	"503s and unknown outcomes/settles unknown/s":                 "no COMMIT goes unanswered, so none is settled",
	"Replicas up and ready, backends down/not ready {{instance}}": "every /readyz answers 200 in a healthy sale",
	"annotation/Alerts":                                           "no alert fires in a short healthy sale",
	"SeckillHTTP5xx":                                              "no answer is 5xx in a healthy sale",
}

// TestDashboardAndRulesDuringASale starts three API processes behind HAProxy and a Prometheus
// that scrapes them and HAProxy's exporter every second with the rules of deploy/prometheus,
// runs a short sale through HAProxy (a dlock and a queue product, bounded in count and time),
// then evaluates through Prometheus's HTTP API
// every expression of the Grafana dashboard and every rule (an alert's expression, and each
// of its signals, the part before the threshold) over the sale: each must parse, and each
// must have data unless mayBeEmpty says why not.
func TestDashboardAndRulesDuringASale(t *testing.T) {
	servers.PrometheusBin(t) // skip before starting anything
	dsn := testenv.Schema(t)
	_, prefix := testenv.Redis(t)
	const token = "observecheck-admin-token"
	apis := servers.StartAPIs(t, 3, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": testenv.RedisAddr(t), "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "5", "RATE_LIMIT_USER": "off",
	})
	var targets []string
	for _, a := range apis {
		targets = append(targets, strings.TrimPrefix(a.Base, "http://"))
	}
	lb := servers.StartHAProxy(t, targets, nil)
	rules, err := os.ReadFile(filepath.Join(deploy, "prometheus/rules/seckill.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	prom := servers.StartPrometheus(t, map[string]string{
		"rules/seckill.rules.yml": string(rules),
		// The job name is the one the rules select on (deploy/prometheus/prometheus.yml).
		"prometheus.yml": fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [rules/seckill.rules.yml]
scrape_configs:
  - job_name: seckill-api
    static_configs: [{targets: ["%s"]}]
  - job_name: haproxy
    static_configs: [{targets: ["%s"]}]
`, strings.Join(targets, `", "`), lb.Stats),
	})

	q := &querier{t: t, base: prom.URL}
	q.awaitScraped(len(apis))
	start := time.Now()
	sale(t, lb.Base, apis, token)
	time.Sleep(3 * time.Second) // two scrapes and rule evaluations after the last answer
	end := time.Now()

	q.start, q.end = start.Add(-2*time.Second), end
	for _, e := range dashboardExprs(t) {
		q.check(e.name, substitute(e.expr), true)
	}
	q.checkVariables()
	for _, r := range q.rules() {
		if r.Health == "err" {
			t.Errorf("rule %s: Prometheus reports %s", r.Name, r.LastError)
		}
		if r.Type == "recording" {
			q.check(r.Name, r.Query, true)
			continue
		}
		q.check(r.Name+" (whole expression)", r.Query, false)
		for i, s := range signals(r.Query) {
			q.check(fmt.Sprintf("%s#%d", r.Name, i+1), s, true)
		}
	}
	if q.checked < 40 {
		t.Errorf("only %d expressions evaluated: the dashboard or the rules were not all read", q.checked)
	}
}

// sale sells a dlock product (stock 60) and a queue product (stock 40) to 100 users each,
// through the load balancer at base, 12 at a time, within 60 s.
func sale(t *testing.T, base string, apis []*servers.API, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := client.New(apis[0].Base, &client.Options{AdminToken: token})
	var products []int64
	for _, np := range []api.NewProduct{
		{Name: "observed dlock", Stock: new(60)},
		{Name: "observed queue", Stock: new(40), Strategy: "queue"},
	} {
		p, err := admin.CreateProduct(ctx, np)
		if err != nil {
			t.Fatalf("create %s: %v", np.Name, err)
		}
		products = append(products, p.ID)
	}
	buyer := client.New(base, nil)
	jobs := make(chan int64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for range 12 {
		wg.Go(func() {
			for user := range jobs {
				for _, id := range products {
					_, err := buyer.Purchase(ctx, id, user)
					mu.Lock()
					answers[answerOf(err)]++
					mu.Unlock()
				}
			}
		})
	}
	for user := int64(1); user <= 100 && ctx.Err() == nil; user++ {
		jobs <- user
	}
	close(jobs)
	wg.Wait()
	for _, a := range apis {
		a.Get("/readyz", "")
	}
	t.Logf("sale answers: %v", answers)
	if answers["bought"]+answers["accepted"] == 0 {
		t.Fatalf("nothing sold: %v", answers)
	}
}

// answerOf names a purchase's answer: bought, a problem's code, a status without one,
// accepted, or the error.
func answerOf(err error) string {
	var p *api.Problem
	var acc *client.AcceptedError
	switch {
	case err == nil:
		return "bought"
	case errors.As(err, &acc):
		return "accepted"
	case errors.As(err, &p) && p.Code == "":
		return fmt.Sprintf("%d without a problem (the load balancer's)", p.Status)
	case errors.As(err, &p):
		return p.Code
	}
	return err.Error()
}

type namedExpr struct{ name, expr string }

// dashboardExprs returns every query of every dashboard in deploy/grafana/dashboards: each
// panel target's, named "<panel title>/<legend>", and each annotation's.
func dashboardExprs(t *testing.T) []namedExpr {
	t.Helper()
	var out []namedExpr
	for _, file := range glob(t, filepath.Join(deploy, "grafana/dashboards/*.json")) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []struct {
				Title   string
				Targets []struct{ Expr, LegendFormat, RefID string }
			}
			Annotations struct {
				List []struct{ Name, Expr string }
			}
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				out = append(out, namedExpr{p.Title + "/" + tg.LegendFormat, tg.Expr})
			}
		}
		for _, a := range d.Annotations.List {
			if a.Expr != "" {
				out = append(out, namedExpr{"annotation/" + a.Name, a.Expr})
			}
		}
	}
	return out
}

// substitute replaces Grafana's variables by what Grafana would use with this test's 1 s
// scrape interval: $__rate_interval is at least four scrape intervals; the dashboard's
// instance and product_id, at All, are their allValue, .*.
func substitute(expr string) string {
	return strings.NewReplacer("$__rate_interval", "5s", "$__interval", "1s", "$__range", "1m",
		"$instance", ".*", "$product_id", ".*").Replace(expr)
}

// querier evaluates expressions over the sale through Prometheus's HTTP API.
type querier struct {
	t          *testing.T
	base       string
	start, end time.Time
	checked    int
}

var promHTTP = &http.Client{Timeout: 10 * time.Second}

// check evaluates expr at each second of the sale: it must parse, and, when wantData, have
// data at some point unless mayBeEmpty names it.
func (q *querier) check(name, expr string, wantData bool) {
	q.t.Helper()
	q.checked++
	if strings.Contains(expr, "$") {
		q.t.Errorf("%s: a variable is left in %s", name, expr)
		return
	}
	var res struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	q.get("/api/v1/query_range?"+url.Values{"query": {expr}, "start": {unix(q.start)}, "end": {unix(q.end)}, "step": {"1"}}.Encode(), &res)
	switch why, marked := mayBeEmpty[strings.TrimSuffix(strings.TrimSuffix(name, "#1"), "#2")]; {
	case res.Status != "success":
		q.t.Errorf("%s: %s: %s", name, expr, res.Error)
	case !wantData:
	case len(res.Data.Result) == 0 && marked:
		q.t.Logf("%s: no data, as expected (%s)", name, why)
	case len(res.Data.Result) == 0:
		q.t.Errorf("%s: no data during the sale: %s", name, expr)
	}
}

// awaitScraped waits up to 30 s until Prometheus has scraped n targets successfully: it
// hands discovered targets to its scrapers a few seconds after it starts.
func (q *querier) awaitScraped(n int) {
	q.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var res struct {
			Data struct{ Result []json.RawMessage }
		}
		q.get("/api/v1/query?"+url.Values{"query": {`up{job="seckill-api"} == 1`}}.Encode(), &res)
		if len(res.Data.Result) == n {
			return
		}
		if time.Now().After(deadline) {
			q.t.Fatalf("Prometheus scraped %d of the %d API processes within 30s", len(res.Data.Result), n)
		}
	}
}

type rule struct{ Name, Query, Type, Health, LastError string }

// rules returns the rules Prometheus loaded.
func (q *querier) rules() []rule {
	var res struct {
		Data struct{ Groups []struct{ Rules []rule } }
	}
	q.get("/api/v1/rules", &res)
	var out []rule
	for _, g := range res.Data.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		q.t.Fatal("Prometheus loaded no rule")
	}
	return out
}

func (q *querier) get(path string, v any) {
	q.t.Helper()
	resp, err := promHTTP.Get(q.base + path)
	if err != nil {
		q.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		q.t.Fatalf("GET %s: %s: %v", path, resp.Status, err)
	}
}

func unix(t time.Time) string { return fmt.Sprintf("%.3f", float64(t.UnixMilli())/1000) }
