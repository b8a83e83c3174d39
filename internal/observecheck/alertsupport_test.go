package observecheck_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api/client"
)

// scaleDurations divides every duration of rules, in a range selector ([5m]) and in a `for:`,
// by div, to one second at least: the alert test's copy of the rules, so that a fault of
// seconds does what one of minutes does in production. It fails the test if rules has none.
func scaleDurations(t *testing.T, rules string, div int) string {
	t.Helper()
	scale := func(n, unit string) string {
		v, _ := strconv.Atoi(n)
		sec := v * map[string]int{"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
		return fmt.Sprintf("%ds", max(1, sec/div))
	}
	ranges := regexp.MustCompile(`\[(\d+)([smhd])\]`)
	fors := regexp.MustCompile(`(?m)^(\s+for: )(\d+)([smhd])\s*$`)
	if len(ranges.FindAllString(rules, -1)) < 20 || len(fors.FindAllString(rules, -1)) < 10 {
		t.Fatalf("scaleDurations: too few durations found in the rules: the rules' layout changed")
	}
	rules = ranges.ReplaceAllStringFunc(rules, func(m string) string {
		g := ranges.FindStringSubmatch(m)
		return "[" + scale(g[1], g[2]) + "]"
	})
	return fors.ReplaceAllStringFunc(rules, func(m string) string {
		g := fors.FindStringSubmatch(m)
		return g[1] + scale(g[2], g[3])
	})
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

// notice is one alert of one notification Alertmanager posted to the webhook.
type notice struct {
	path   string // the receiver's: /seckill/page or /seckill/ticket
	status string // firing or resolved
	labels map[string]string
}

func (n notice) name() string { return n.labels["alertname"] }

// key names the alert: its labels, sorted.
func (n notice) key() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n.labels)) {
		parts = append(parts, k+"="+n.labels[k])
	}
	return strings.Join(parts, ",")
}

// webhook is the receiver of Alertmanager's notifications: it records each alert it is told
// of, in order. It is safe for concurrent use.
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
		w.mu.Lock()
		for _, a := range msg.Alerts {
			w.notices = append(w.notices, notice{path: r.URL.Path, status: a.Status, labels: a.Labels})
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

// state returns, for each alert told of, whether its last notice says it fires.
func (w *webhook) state() map[string]notice {
	last := map[string]notice{}
	for _, n := range w.all() {
		last[n.key()] = n
	}
	return last
}

// firingNames returns the names of the alerts whose last notice says they fire.
func (w *webhook) firingNames() []string {
	var out []string
	for _, n := range w.state() {
		if n.status == "firing" && !slices.Contains(out, n.name()) {
			out = append(out, n.name())
		}
	}
	slices.Sort(out)
	return out
}

// names returns the names of every alert told of so far.
func (w *webhook) names() []string {
	var out []string
	for _, n := range w.all() {
		if !slices.Contains(out, n.name()) {
			out = append(out, n.name())
		}
	}
	slices.Sort(out)
	return out
}

// traffic buys through the load balancer from 4 workers, each about 6 purchases a second, a
// new user each time, until the test ends; pause stops it and waits for the purchases in
// flight.
type traffic struct {
	paused   atomic.Bool
	inflight atomic.Int64
	mu       sync.Mutex
	answers  map[string]int
}

func startTraffic(t *testing.T, base string, products []int64) *traffic {
	tr := &traffic{answers: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	buyer := client.New(base, nil)
	var users atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				time.Sleep(150 * time.Millisecond)
				tr.inflight.Add(1)
				if tr.paused.Load() {
					tr.inflight.Add(-1)
					continue
				}
				u := users.Add(1)
				pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := buyer.Purchase(pctx, products[int(u)%len(products)], u)
				pcancel()
				tr.inflight.Add(-1)
				if ctx.Err() != nil { // the test is over
					return
				}
				tr.mu.Lock()
				tr.answers[answerOf(err)]++
				tr.mu.Unlock()
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		t.Logf("purchase answers through the load balancer: %v", tr.snapshot())
	})
	return tr
}

func (tr *traffic) pause() {
	tr.paused.Store(true)
	for tr.inflight.Load() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
}

func (tr *traffic) resume() { tr.paused.Store(false) }

func (tr *traffic) snapshot() map[string]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return maps.Clone(tr.answers)
}
