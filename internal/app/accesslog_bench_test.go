package app_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/reqid"
	"github.com/seckill/seckill/internal/testenv"
)

// BenchmarkSoldOutHTTPAccessLog is BenchmarkSoldOutHTTP (buyers=0) with the access log off,
// on for every answer (ACCESS_LOG=all, ACCESS_LOG_SAMPLE=1) and as by default (all, 409s
// sampled at 0.01), its JSON lines written to /dev/null as cmd/api writes them to stderr:
// what a line costs a sold-out answer. Run with -count to interleave the three.
func BenchmarkSoldOutHTTPAccessLog(b *testing.B) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { null.Close() })
	log := slog.New(reqid.NewHandler(slog.NewJSONHandler(null, nil)))
	gdb := testenv.Postgres(b)
	rdb, prefix := testenv.Redis(b)
	for _, m := range []struct {
		name string
		a    httpapi.AccessLog
	}{
		{"off", httpapi.AccessLog{Mode: httpapi.AccessLogOff}},
		{"all", httpapi.AccessLog{Mode: httpapi.AccessLogAll, Sample: 1}},
		{"default", httpapi.AccessLog{Mode: httpapi.AccessLogAll, Sample: 0.01}},
	} {
		b.Run(m.name, func(b *testing.B) {
			s := serve(b, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken, Logger: log, AccessLog: m.a})
			benchSoldOut(b, s.App.Handler, soldOutPath(b, s))
		})
	}
}
