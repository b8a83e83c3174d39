//go:build linux

package gameday_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// timeScale divides the durations of the game day's copy of the rules: a minute of the
// rules is 4 s of the game day, so that an alert's `for:` and its windows fit faults of
// seconds (internal/observecheck's alert test scales them the same way).
const timeScale = 15

// scrapeInterval is Prometheus's scrape and evaluation interval: four samples in the
// shortest window of the scaled rules (a rule's [1m], 4 s here). The scrape timeout is as
// long: a shorter one (the game day first scraped every 250 ms) times out the scrapes of
// replicas busy on a loaded machine, and SeckillReplicaDown and SeckillNoReplica fire for
// replicas that serve.
const scrapeInterval = "1s"

// forFloor is the shortest `for:` of the scaled rules: five scrapes, as production's shortest
// (`for: 30s`, scraped every 5 s) has six. Scaled alone, `for: 30s` is 2 s, two scrapes: a
// loaded machine's -race build once missed two scrapes of every replica at once, and
// SeckillReplicaDown and SeckillNoReplica fired for replicas that served.
const forFloor = 5 * time.Second

// deployDir is the project's deploy/ directory.
func deployDir() string { return filepath.Dir(filepath.Dir(servers.HAProxyConfig())) }

// scaledRules is deploy/prometheus/rules/seckill.rules.yml with every duration divided by
// timeScale (one second at least), and every `for:` forFloor at least, without the slow
// burn-rate alerts, whose windows of days would still be hours here (promtool's unit tests
// test those).
func scaledRules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(), "prometheus/rules/seckill.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	scale := func(n, unit string) string {
		v, _ := strconv.Atoi(n)
		sec := v * map[string]int{"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
		return fmt.Sprintf("%ds", max(1, sec/timeScale))
	}
	ranges := regexp.MustCompile(`\[(\d+)([smhd])\]`)
	fors := regexp.MustCompile(`(?m)^(\s+for: )(\d+)([smhd])\s*$`)
	rules := string(b)
	if len(ranges.FindAllString(rules, -1)) < 20 || len(fors.FindAllString(rules, -1)) < 10 {
		t.Fatalf("scaledRules: too few durations found in the rules: the rules' layout changed")
	}
	rules = ranges.ReplaceAllStringFunc(rules, func(m string) string {
		g := ranges.FindStringSubmatch(m)
		return "[" + scale(g[1], g[2]) + "]"
	})
	rules = fors.ReplaceAllStringFunc(rules, func(m string) string {
		g := fors.FindStringSubmatch(m)
		v, _ := strconv.Atoi(g[2])
		sec := v * map[string]int{"s": 1, "m": 60, "h": 3600, "d": 86400}[g[3]]
		return g[1] + fmt.Sprintf("%ds", max(int(forFloor/time.Second), sec/timeScale))
	})
	for _, name := range []string{"SeckillErrorBudgetBurnSlow", "SeckillLatencyBudgetBurnSlow"} {
		rules = dropAlert(t, rules, name)
	}
	return rules
}

// dropAlert removes alert name's rule from rules (its lines up to the next rule or group).
func dropAlert(t *testing.T, rules, name string) string {
	t.Helper()
	start := strings.Index(rules, "      - alert: "+name+"\n")
	if start < 0 {
		t.Fatalf("dropAlert: no alert %s in the rules", name)
	}
	rest := rules[start+1:]
	end := len(rest)
	for _, next := range []string{"\n      - alert: ", "\n      # ", "\n  - name: "} {
		if i := strings.Index(rest, next); i >= 0 && i < end {
			end = i
		}
	}
	return rules[:start] + rest[end+1:]
}

// alertmanagerConfig is deploy/alertmanager/alertmanager.yml with its webhooks at url and its
// waits cut to a second.
func alertmanagerConfig(t *testing.T, url string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(), "alertmanager/alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	config := string(b)
	for _, r := range [][2]string{{"http://webhook.invalid", url}, {"group_wait: 10s", "group_wait: 1s"},
		{"group_interval: 1m", "group_interval: 1s"}, {"repeat_interval: 4h", "repeat_interval: 1h"}} {
		if !strings.Contains(config, r[0]) {
			t.Fatalf("deploy/alertmanager/alertmanager.yml has no %q to replace", r[0])
		}
		config = strings.ReplaceAll(config, r[0], r[1])
	}
	return config
}

// notice is one alert of one notification Alertmanager posted to the webhook.
type notice struct {
	at       time.Time // when the webhook got it
	receiver string    // /seckill/page or /seckill/ticket
	status   string    // firing or resolved
	labels   map[string]string
}

func (n notice) name() string { return n.labels["alertname"] }

// key names the alert: its name and labels, sorted, without the severity.
func (n notice) key() string {
	var parts []string
	for k, v := range n.labels {
		if k != "severity" {
			parts = append(parts, k+"="+v)
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// webhook is Alertmanager's receiver: it records each alert it is told of, in order. It is
// safe for concurrent use.
type webhook struct {
	URL     string
	mu      sync.Mutex
	notices []notice
}

func startWebhook(t *testing.T) *webhook {
	w := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var msg struct {
			Alerts []struct {
				Status string
				Labels map[string]string
			}
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			t.Errorf("webhook: %s: %v", r.URL.Path, err)
		}
		now := time.Now()
		w.mu.Lock()
		for _, a := range msg.Alerts {
			w.notices = append(w.notices, notice{at: now, receiver: r.URL.Path, status: a.Status, labels: a.Labels})
		}
		w.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

// all returns the notices so far.
func (w *webhook) all() []notice {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.notices)
}

// alertSpan is one alert from the notice that it fires to the one that it resolved (End
// zero while it fires).
type alertSpan struct {
	Name, Key, Severity, Receiver string
	Start, End                    time.Time
}

// spans turns the notices into spans: a firing notice of an alert not firing starts one, a
// resolved notice ends it.
func spans(notices []notice) []alertSpan {
	var out []alertSpan
	open := map[string]int{}
	for _, n := range notices {
		i, firing := open[n.key()]
		switch {
		case n.status == "firing" && !firing:
			open[n.key()] = len(out)
			out = append(out, alertSpan{Name: n.name(), Key: n.key(), Severity: n.labels["severity"], Receiver: n.receiver, Start: n.at})
		case n.status == "resolved" && firing:
			out[i].End = n.at
			delete(open, n.key())
		}
	}
	return out
}

// firing returns the names of the alerts that fire now.
func (w *webhook) firing() []string {
	var names []string
	for _, s := range spans(w.all()) {
		if s.End.IsZero() && !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	return names
}

// awaitQuiet waits up to d until no alert fires, and returns those that still do.
func (w *webhook) awaitQuiet(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		f := w.firing()
		if len(f) == 0 || time.Now().After(deadline) {
			return f
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// querier asks Prometheus's HTTP API.
type querier struct {
	t    *testing.T
	base string
}

func (q *querier) get(path string, out any) {
	q.t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(q.base + path)
	if err != nil {
		q.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		q.t.Fatalf("%s: %v", path, err)
	}
}

// awaitScraped waits up to 30 s until Prometheus has scraped n targets successfully.
func (q *querier) awaitScraped(n int) {
	q.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var res struct {
			Data struct{ Result []json.RawMessage }
		}
		q.get("/api/v1/query?"+url.Values{"query": {`up == 1`}}.Encode(), &res)
		if len(res.Data.Result) >= n {
			return
		}
		if time.Now().After(deadline) {
			q.t.Fatalf("Prometheus scrapes %d targets, want %d", len(res.Data.Result), n)
		}
	}
}

// ruleGroups is how many rule groups Prometheus has loaded.
func (q *querier) ruleGroups() int {
	var res struct {
		Data struct{ Groups []json.RawMessage }
	}
	q.get("/api/v1/rules", &res)
	return len(res.Data.Groups)
}
