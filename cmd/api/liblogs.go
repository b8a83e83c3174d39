package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"
)

var (
	libLog      atomic.Pointer[slog.Logger] // where the libraries' messages go: the last serve's logger
	libLogsOnce sync.Once
)

// routeLibraryLogs sends what the libraries log on their own to log, as JSON lines: Go's
// standard log package (slog.SetDefault), OpenTelemetry's errors (a failed trace export) and
// internal messages, and gRPC's warnings and errors (the etcd client). go-redis's are routed in
// serve (redisLogger), promhttp's by metrics.LoggedHandler. Those settings are process-wide and
// made once, before any gRPC client (gRPC requires it), to a logger that forwards to the log of
// the latest call.
func routeLibraryLogs(log *slog.Logger) {
	libLog.Store(log)
	libLogsOnce.Do(func() {
		h := forwardHandler{}
		fwd := slog.New(h)
		slog.SetDefault(fwd)
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			fwd.Warn("opentelemetry", "err", err)
		}))
		otel.SetLogger(logr.FromSlogHandler(h))
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard,
			lineWriter{fwd, slog.LevelWarn, "grpc"}, lineWriter{fwd, slog.LevelError, "grpc"}))
	})
}

// forwardHandler is a slog.Handler that hands each record to libLog's handler, with the
// attributes and groups it was given.
type forwardHandler struct {
	with []func(slog.Handler) slog.Handler
}

func (f forwardHandler) target() slog.Handler {
	h := libLog.Load().Handler()
	for _, w := range f.with {
		h = w(h)
	}
	return h
}

func (f forwardHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return f.target().Enabled(ctx, l)
}

func (f forwardHandler) Handle(ctx context.Context, r slog.Record) error {
	return f.target().Handle(ctx, r)
}

func (f forwardHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return forwardHandler{with: append(f.with[:len(f.with):len(f.with)], func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })}
}

func (f forwardHandler) WithGroup(name string) slog.Handler {
	return forwardHandler{with: append(f.with[:len(f.with):len(f.with)], func(h slog.Handler) slog.Handler { return h.WithGroup(name) })}
}

// lineWriter logs each line written to it as one slog line at level, its text under "text".
type lineWriter struct {
	log   *slog.Logger
	level slog.Level
	msg   string
}

func (w lineWriter) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			w.log.Log(context.Background(), w.level, w.msg, "text", string(line))
		}
	}
	return len(p), nil
}
