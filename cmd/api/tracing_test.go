package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/tracing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestTracingOffByDefault: with no OTEL_* variable set, the setup is a no-op tracer provider,
// which the app treats as off (no middleware, hooks or spans), and nothing to flush.
func TestTracingOffByDefault(t *testing.T) {
	cfg, err := parseConfig(nil, lookup(nil), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	tp, stop, err := newTracerProvider(context.Background(), cfg.tracing)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Fatalf("provider with no OTEL_* set = %T, want noop.TracerProvider", tp)
	}
	if tracing.Enabled(tp) {
		t.Fatal("tracing.Enabled(no-op provider) = true")
	}
	if err := stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestTracingConfig: the standard variables turn tracing on and off, name the endpoint and
// sampler, and refuse what this build cannot do.
func TestTracingConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		on       bool
		endpoint string
		err      string
	}{
		{"nothing", nil, false, "", ""},
		{"service name alone", map[string]string{"OTEL_SERVICE_NAME": "x"}, false, "", ""},
		{"base endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}, true, "http://collector:4318/v1/traces", ""},
		{"traces endpoint as is", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/traces"}, true, "http://b:4318/traces", ""},
		{"exporter otlp, default endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, "", ""},
		{"exporter none wins", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, "", ""},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, "", ""},
		{"sdk disabled, any case", map[string]string{"OTEL_SDK_DISABLED": "tRuE", "OTEL_TRACES_EXPORTER": "otlp"}, false, "", ""},
		{"sdk not disabled", map[string]string{"OTEL_SDK_DISABLED": "FALSE", "OTEL_TRACES_EXPORTER": "otlp"}, true, "", ""},
		{"sdk disabled: yes", map[string]string{"OTEL_SDK_DISABLED": "yes", "OTEL_TRACES_EXPORTER": "otlp"}, false, "", `OTEL_SDK_DISABLED "yes"`},
		{"sdk disabled: 1", map[string]string{"OTEL_SDK_DISABLED": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, "", `OTEL_SDK_DISABLED "1"`},
		{"sdk disabled: on, tracing off anyway", map[string]string{"OTEL_SDK_DISABLED": "on"}, false, "", `OTEL_SDK_DISABLED "on"`},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "", "OTEL_TRACES_EXPORTER"},
		{"grpc refused", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "", "http/protobuf only"},
		{"traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, "", ""},
		{"ratio sampler", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
			"OTEL_TRACES_SAMPLER_ARG": "0.25"}, true, "", ""},
		{"bad ratio", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio",
			"OTEL_TRACES_SAMPLER_ARG": "2"}, false, "", "OTEL_TRACES_SAMPLER_ARG"},
		{"unknown sampler", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "sometimes"}, false, "", "OTEL_TRACES_SAMPLER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTracing(envOf(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.on != tc.on || got.endpointURL != tc.endpoint {
				t.Fatalf("on %v, endpoint %q; want %v, %q", got.on, got.endpointURL, tc.on, tc.endpoint)
			}
			if !got.on {
				return
			}
			tp, stop, err := newTracerProvider(context.Background(), got) // connects lazily: nothing listens
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tp.(*sdktrace.TracerProvider); !ok || !tracing.Enabled(tp) {
				t.Fatalf("provider = %T, want an SDK provider that records", tp)
			}
			if err := stop(context.Background()); err != nil { // nothing buffered: no export attempted
				t.Fatalf("stop: %v", err)
			}
		})
	}
}

// TestTracingSampler: the ratio reaches the sampler.
func TestTracingSampler(t *testing.T) {
	s, err := parseSampler("parentbased_traceidratio", "0.25")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Description(); !strings.Contains(got, "TraceIDRatioBased{0.25}") {
		t.Fatalf("sampler = %s, want a parent-based ratio of 0.25", got)
	}
}

// TestTracingExportsAtShutdown runs the whole program with OTEL_EXPORTER_OTLP_ENDPOINT naming
// a stand-in collector (an HTTP server of the test's own): the spans of the requests it served
// reach the collector, over OTLP/HTTP at /v1/traces, when it shuts down (the batch is
// flushed, not lost), under OTEL_SERVICE_NAME.
func TestTracingExportsAtShutdown(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies []string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"REDIS_KEY_PREFIX": testenv.Name("otel"), "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
		"OTEL_SERVICE_NAME": "seckill-trace-test"})
	resp, err := http.Get(api.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	logs := api.stop()
	if !strings.Contains(logs, "tracing on") {
		t.Errorf("no \"tracing on\" line in the logs:\n%s", logs)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(bodies, "")
	for _, want := range []string{"seckill-trace-test", "GET /readyz", "GET /healthz"} {
		if !strings.Contains(all, want) {
			t.Errorf("the collector got %d exports without %q", len(bodies), want)
		}
	}
}
