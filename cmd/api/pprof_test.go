package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

func TestPprofAddrLoopbackOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6060", true},
		{"127.0.0.2:6060", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{"LOCALHOST:6060", true},
		{":6060", false},
		{"0.0.0.0:6060", false},
		{"[::]:6060", false},
		{"10.0.0.5:6060", false},
		{"192.168.1.2:6060", false},
		{"example.com:6060", false},
		{"localhost.example.com:6060", false},
		{"127.0.0.1", false}, // no port
		{"6060", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			checkSetting(t, "PPROF_ADDR", tt.addr, tt.ok, func(cfg config) string { return cfg.pprofAddr })
		})
	}
}

// TestPprofRefusedStopsRun: a PPROF_ADDR that other hosts reach stops the program before it
// opens anything, whether it comes from the variable or the flag.
func TestPprofRefusedStopsRun(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"api"}, {"api", "-pprof-addr", "0.0.0.0:6060"}} {
		env := map[string]string{"PPROF_ADDR": ":6060"}
		err := run(context.Background(), args, lookup(env), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "PPROF_ADDR") {
			t.Fatalf("run %q with PPROF_ADDR :6060 = %v, want an error naming PPROF_ADDR", args, err)
		}
	}
}

// TestPprofServesOnLoopback: a loopback PPROF_ADDR serves the profiles while the program runs,
// and stops serving them when it returns.
func TestPprofServesOnLoopback(t *testing.T) {
	t.Parallel()
	pprofAddr := testenv.FreeAddr(t)
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"PPROF_ADDR": pprofAddr})
	var status int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/")
		if err == nil {
			status = resp.StatusCode
			resp.Body.Close()
			break
		}
	}
	if status != http.StatusOK {
		t.Fatalf("GET /debug/pprof/ on %s = %d, want 200", pprofAddr, status)
	}
	api.stop()
	if conn, err := net.DialTimeout("tcp", pprofAddr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("pprof still listens on %s after run returned", pprofAddr)
	}
}
