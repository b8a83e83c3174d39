package servers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestAPIInNetns: an API process in a namespace of its own listens inside and is reached
// there, reaches PostgreSQL and Redis through forwarders, answers /readyz 503 within its
// checks' 2 s once silently partitioned from either, and is ready again once healed.
func TestAPIInNetns(t *testing.T) {
	testenv.SkipShort(t, "an API process in a network namespace")
	t.Parallel()
	ns := servers.StartNetns(t)
	env := apiEnv(t)
	u, err := url.Parse(env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	pg, redis := ns.Forward(u.Host), ns.Forward(env["REDIS_ADDR"])
	u.Host = pg
	env["DATABASE_URL"], env["REDIS_ADDR"] = u.String(), redis
	a := servers.StartAPIIn(t, ns, "inside", env)
	if !strings.HasPrefix(a.Base, "http://"+ns.Inside+":") {
		t.Errorf("Base = %s, want an address of %s", a.Base, ns.Inside)
	}
	for _, cut := range []struct{ name, addr string }{{"PostgreSQL", pg}, {"Redis", redis}} {
		ns.Partition(cut.addr)
		start := time.Now()
		status, body := a.Get("/readyz", "")
		if status != http.StatusServiceUnavailable {
			t.Errorf("partitioned from %s: /readyz = %d %s, want 503", cut.name, status, body)
		}
		t.Logf("partitioned from %s: /readyz %d in %v: %s", cut.name, status, time.Since(start).Round(time.Millisecond), body)
		ns.Heal()
		start = time.Now()
		a.WaitReady("/readyz")
		t.Logf("healed: ready again in %v", time.Since(start).Round(time.Millisecond))
	}
}
