package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracingConfig is what the standard OTEL_* variables say of traces. Tracing is off unless
// an OTLP endpoint is named or OTEL_TRACES_EXPORTER=otlp; OTEL_TRACES_EXPORTER=none and
// OTEL_SDK_DISABLED=true (any case) turn it off whatever else is set.
type tracingConfig struct {
	on          bool
	endpointURL string // the traces endpoint's full URL; empty: the exporter's default (http://localhost:4318/v1/traces)
	serviceName string
	sampler     sdktrace.Sampler
}

// parseTracing reads the OTEL_* variables of traces through getenv. The exporter's other
// variables (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE, ...) and
// OTEL_RESOURCE_ATTRIBUTES are read by the OpenTelemetry SDK itself from the process's
// environment.
func parseTracing(getenv func(string) string) (tracingConfig, error) {
	tc := tracingConfig{serviceName: getenv("OTEL_SERVICE_NAME")}
	if tc.serviceName == "" {
		tc.serviceName = "seckill-api"
	}
	switch v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); strings.ToLower(v) {
	case "true":
		return tc, nil
	case "false", "":
	default:
		// The specification reads anything but true as false (with a warning): "yes" would
		// leave tracing on. Refuse to guess.
		return tc, fmt.Errorf("OTEL_SDK_DISABLED %q: want true or false (any case)", v)
	}
	switch exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "none":
		return tc, nil
	case "otlp":
		tc.on = true
	case "":
		tc.on = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	default:
		return tc, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp or none", exporter)
	}
	if !tc.on {
		return tc, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(v); p != "" && p != "http/protobuf" {
			return tc, fmt.Errorf("%s %q: this build exports traces over http/protobuf only", v, p)
		}
		if getenv(v) != "" {
			break // the traces-specific one wins
		}
	}
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		tc.endpointURL = u // used as is
	} else if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		tc.endpointURL = strings.TrimSuffix(u, "/") + "/v1/traces" // a base URL: the signal's path is added
	}
	var err error
	tc.sampler, err = parseSampler(getenv("OTEL_TRACES_SAMPLER"), getenv("OTEL_TRACES_SAMPLER_ARG"))
	return tc, err
}

// parseSampler reads OTEL_TRACES_SAMPLER and its argument, as the specification names them;
// the default is parentbased_always_on.
func parseSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q: want a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER %q: want always_on, always_off, traceidratio or their parentbased_ forms", name)
}

// newTracerProvider returns the tracer provider tc describes, and the function that flushes
// and stops it at shutdown. With tracing off it is a no-op provider: nothing is started, and
// the app adds no middleware, hook or span (tracing.Enabled).
func newTracerProvider(ctx context.Context, tc tracingConfig) (trace.TracerProvider, func(context.Context) error, error) {
	if !tc.on {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if tc.endpointURL != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(tc.endpointURL))
	}
	exp, err := otlptracehttp.New(ctx, opts...) // connects lazily: a collector down at start is no error
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", tc.serviceName)))
	if err != nil {
		return nil, nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(tc.sampler))
	return tp, tp.Shutdown, nil
}

// flushTraces sends the spans still buffered and stops the tracer provider, within 5 s: a
// collector that does not answer must not hold up the process's exit.
func flushTraces(stop func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := stop(ctx); err != nil {
		log.Warn("traces not flushed", "err", err)
	}
}
