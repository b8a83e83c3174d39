package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/metrics"
)

func TestBuildInfo(t *testing.T) {
	build := buildinfo.Info{Version: "v1.2.0+dirty", Revision: "0123abcd", Time: "2026-01-02T15:04:05Z", Modified: true, GoVersion: "go1.26.8"}
	rec := httptest.NewRecorder()
	metrics.New(nil, nil, build).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if want := `seckill_build_info{go_version="go1.26.8",revision="0123abcd",version="v1.2.0+dirty"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s; got:\n%s", want, body)
	}
}
