package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/testenv"
)

// TestVersionFlag: `api -version` prints the build on stdout and exits, whatever the rest of
// the configuration says.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DB_MAX_CONNS": "zero"} // would fail start-up
	var out bytes.Buffer
	if err := run(context.Background(), []string{"api", "-version"}, lookup(env), &out, io.Discard); err != nil {
		t.Fatalf("api -version: %v", err)
	}
	if got, want := out.String(), "api "+buildinfo.Read().String()+"\n"; got != want {
		t.Fatalf("api -version printed %q, want %q", got, want)
	}
	if want := " go=" + runtime.Version(); !strings.Contains(out.String(), want) {
		t.Errorf("api -version printed %q, want it to contain %q", out.String(), want)
	}
}

// TestBuildInfoReported: the running API exports its build on /metrics and logs it in the
// "listening" line.
func TestBuildInfoReported(t *testing.T) {
	t.Parallel()
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t)})
	b := buildinfo.Read()
	_, body := get(t, api.base+"/metrics")
	want := fmt.Sprintf(`seckill_build_info{go_version=%q,revision=%q,version=%q} 1`, b.GoVersion, b.Revision, b.Version)
	if !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	logs := api.stop()
	for line := range strings.Lines(logs) {
		var rec struct {
			Msg   string
			Build struct{ Version, Revision, Go string }
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "listening" {
			continue
		}
		if got := rec.Build; got.Version != b.Version || got.Revision != b.Revision || got.Go != b.GoVersion {
			t.Errorf("listening line %s: want build version %q, revision %q, go %q", line, b.Version, b.Revision, b.GoVersion)
		}
		return
	}
	t.Errorf("no listening line in the log:\n%s", logs)
}
