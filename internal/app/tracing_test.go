package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

const purchaseSpan = "POST /api/v1/products/:id/purchase"

// TestTracingBundle: a bundle's request span has its rate-limit check and the wait for and
// hold of its products' locks as children, with the locks' Redis calls under the wait and the
// transaction's PostgreSQL calls under the hold.
func TestTracingBundle(t *testing.T) {
	t.Parallel()
	s, rec := tracedStack(t, order.Config{})
	p1, p2 := s.createProduct(t, 5, "dlock", 0), s.createProduct(t, 5, "dlock", 0)
	if _, err := s.API.PurchaseBundle(context.Background(), 7, p1.ID, p2.ID); err != nil {
		t.Fatalf("bundle: %v", err)
	}
	const name = "POST /api/v1/bundles/purchase"
	var spans []sdktrace.ReadOnlySpan
	waitFor(t, "the bundle's span to end", func() bool { spans = rec.Ended(); return count(spans, name) == 1 })
	under := underOf(spans)
	for _, r := range spans {
		if r.Name() != name {
			continue
		}
		wait, hold := child(spans, r, "lock.wait"), child(spans, r, "lock.hold")
		if !hasChild(spans, r, "ratelimit.check") || wait == nil || hold == nil {
			t.Fatalf("bundle span's children: ratelimit.check %v, lock.wait %v, lock.hold %v; want all",
				hasChild(spans, r, "ratelimit.check"), wait != nil, hold != nil)
		}
		if !descends(spans, wait, under, "db.system", "redis") || !descends(spans, hold, under, "db.system", "postgresql") {
			t.Errorf("want Redis spans under lock.wait and PostgreSQL spans under lock.hold")
		}
	}
}

// tracedStack serves an API process whose spans, PostgreSQL's and Redis's included, go to
// the returned recorder.
func tracedStack(t *testing.T, cfg order.Config) (*stack, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	gdb, err := db.Open(testenv.Schema(t), db.PoolOptions{MaxOpen: 4, Tracer: app.PostgresTracer(tp)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB, _ := gdb.DB(); sqlDB.Close() })
	rdb, prefix := testenv.Redis(t)
	return serve(t, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken, TracerProvider: tp,
		RateLimits: httpapi.RateLimits{User: httpapi.Rate{N: 100, Per: time.Second}}, Order: cfg}), rec
}

// underOf returns whether a span descends from the span anc, through spans.
func underOf(spans []sdktrace.ReadOnlySpan) func(sdktrace.ReadOnlySpan, trace.SpanID) bool {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		byID[sp.SpanContext().SpanID()] = sp
	}
	return func(sp sdktrace.ReadOnlySpan, anc trace.SpanID) bool {
		for sp != nil {
			if sp.Parent().SpanID() == anc {
				return true
			}
			sp = byID[sp.Parent().SpanID()]
		}
		return false
	}
}

// TestTracingPurchase: real purchases over real HTTP, PostgreSQL and Redis, recorded by the
// SDK's in-memory recorder, give each request one trace: its HTTP span (a child of the
// caller's traceparent), its rate-limit check, and, for a batch's leader, the batch, the lock
// wait and hold, and the Redis and PostgreSQL calls under them; each batch links to the spans
// of all the buyers it served, who came from different requests.
func TestTracingPurchase(t *testing.T) {
	t.Parallel()
	s, rec := tracedStack(t, order.Config{LockWait: 5 * time.Second})
	p := s.createProduct(t, 10, "dlock", 800) // the first buyer holds the lock 800 ms

	// The first buyer comes with a caller's traceparent, alone; the other three come while it
	// holds the lock, so they form the next batch, led by one of them.
	caller := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6},
		TraceFlags: trace.FlagsSampled, Remote: true})
	var wg sync.WaitGroup
	buy := func(user int64, traceparent string) {
		defer wg.Done()
		body := fmt.Sprintf(`{"user_id":%d}`, user)
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
			fmt.Sprintf("%s/api/v1/products/%d/purchase", s.URL, p.ID), strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if traceparent != "" {
			req.Header.Set("traceparent", traceparent)
		}
		resp, err := s.HTTP.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("purchase by %d: %s, want 201", user, resp.Status)
		}
	}
	wg.Add(1)
	go buy(1, fmt.Sprintf("00-%s-%s-01", caller.TraceID(), caller.SpanID()))
	waitFor(t, "the first buyer's lock hold", func() bool { return countStarted(rec, "lock.hold") == 1 })
	for user := int64(2); user <= 4; user++ {
		wg.Add(1)
		go buy(user, "")
	}
	wg.Wait()
	var spans []sdktrace.ReadOnlySpan
	waitFor(t, "every request's span to end", func() bool {
		spans = rec.Ended()
		return count(spans, purchaseSpan) == 4 && count(spans, "order.batch") >= 2
	})

	under := underOf(spans)
	requests := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	traces := map[trace.TraceID]bool{}
	for _, sp := range spans {
		if sp.Name() != purchaseSpan {
			continue
		}
		requests[sp.SpanContext().SpanID()] = sp
		traces[sp.SpanContext().TraceID()] = true
		if sp.SpanKind() != trace.SpanKindServer {
			t.Errorf("%s: kind %s, want server", sp.Name(), sp.SpanKind())
		}
		if !hasChild(spans, sp, "ratelimit.check") {
			t.Errorf("request %s has no ratelimit.check span", sp.SpanContext().SpanID())
		}
	}
	if got, want := len(traces), 4; got != want {
		t.Fatalf("purchases in %d traces, want %d: one per request", got, want)
	}
	if !traces[caller.TraceID()] {
		t.Errorf("no request span in the caller's trace %s: traceparent not followed", caller.TraceID())
	}
	for _, r := range requests {
		if r.SpanContext().TraceID() == caller.TraceID() && r.Parent().SpanID() != caller.SpanID() {
			t.Errorf("the first request's parent is %s, want the caller's %s", r.Parent().SpanID(), caller.SpanID())
		}
	}

	linked := map[trace.SpanID]bool{}
	largest := 0
	for _, b := range spans {
		if b.Name() != "order.batch" {
			continue
		}
		leader, ok := requests[b.Parent().SpanID()]
		if !ok || b.SpanContext().TraceID() != leader.SpanContext().TraceID() {
			t.Errorf("batch %s is not a child of a purchase request's span", b.SpanContext().SpanID())
			continue
		}
		for _, l := range b.Links() {
			if _, ok := requests[l.SpanContext.SpanID()]; !ok {
				t.Errorf("batch %s links to %s, not a request's span", b.SpanContext().SpanID(), l.SpanContext.SpanID())
			}
			linked[l.SpanContext.SpanID()] = true
		}
		largest = max(largest, len(b.Links()))
		wait, hold := child(spans, b, "lock.wait"), child(spans, b, "lock.hold")
		if wait == nil || hold == nil {
			t.Errorf("batch %s: lock.wait %v, lock.hold %v: want both as its children", b.SpanContext().SpanID(), wait != nil, hold != nil)
			continue
		}
		if !descends(spans, wait, under, "db.system", "redis") {
			t.Errorf("batch %s: no Redis span under lock.wait (the lock's obtain)", b.SpanContext().SpanID())
		}
		if !descends(spans, hold, under, "db.system", "postgresql") {
			t.Errorf("batch %s: no PostgreSQL span under lock.hold (the batch's transaction)", b.SpanContext().SpanID())
		}
	}
	if got, want := len(linked), len(requests); got != want {
		t.Errorf("batches link to %d request spans, want each of the %d", got, want)
	}
	if largest < 2 {
		t.Errorf("largest batch links to %d buyers, want a batch of several requests", largest)
	}
	for _, sp := range spans { // the first buyer's rate-limit check went to Redis alone, under its span
		if sp.Name() == "ratelimit.check" && sp.SpanContext().TraceID() == caller.TraceID() &&
			!descends(spans, sp, under, "db.system", "redis") {
			t.Errorf("no Redis span under the first buyer's ratelimit.check")
		}
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func countStarted(rec *tracetest.SpanRecorder, name string) int {
	n := 0
	for _, sp := range rec.Started() {
		if sp.Name() == name {
			n++
		}
	}
	return n
}

func count(spans []sdktrace.ReadOnlySpan, name string) int {
	n := 0
	for _, sp := range spans {
		if sp.Name() == name {
			n++
		}
	}
	return n
}

// child returns parent's child span named name, or nil.
func child(spans []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, sp := range spans {
		if sp.Name() == name && sp.Parent().SpanID() == parent.SpanContext().SpanID() &&
			sp.SpanContext().TraceID() == parent.SpanContext().TraceID() {
			return sp
		}
	}
	return nil
}

func hasChild(spans []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan, name string) bool {
	return child(spans, parent, name) != nil
}

// descends reports whether a span with attribute key (or key.name, newer semantic
// conventions' db.system.name) = value descends from anc.
func descends(spans []sdktrace.ReadOnlySpan, anc sdktrace.ReadOnlySpan,
	under func(sdktrace.ReadOnlySpan, trace.SpanID) bool, key, value string,
) bool {
	for _, sp := range spans {
		for _, a := range sp.Attributes() {
			if (string(a.Key) == key || string(a.Key) == key+".name") && a.Value.AsString() == value && under(sp, anc.SpanContext().SpanID()) {
				return true
			}
		}
	}
	return false
}

// BenchmarkSoldOutHTTPTraced is BenchmarkSoldOutHTTP (buyers=0) with tracing on: every request
// sampled and its span built, by an SDK provider with no exporter. It shows what tracing costs
// when on; off, BenchmarkSoldOutHTTP is the same as before tracing existed.
func BenchmarkSoldOutHTTPTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	rdb, prefix := testenv.Redis(b)
	s := serve(b, app.Config{DB: testenv.Postgres(b), Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken, TracerProvider: tp})
	benchSoldOut(b, s.App.Handler, soldOutPath(b, s))
}
