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
// there, reaches PostgreSQL and Redis through forwarders; its dependency report
// (/readyz?full=1) names the backend it is silently partitioned from within the background
// checker's round (every 2 s, each check bounded by 2 s), while /readyz, its own readiness,
// stays 200; the report is 200 again once healed.
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
		var status int
		var body []byte
		for deadline := start.Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if status, body = a.Get("/readyz?full=1", ""); status == http.StatusServiceUnavailable {
				break
			}
		}
		if status != http.StatusServiceUnavailable {
			t.Errorf("partitioned from %s: /readyz?full=1 = %d %s, want 503", cut.name, status, body)
		}
		t.Logf("partitioned from %s: /readyz?full=1 %d in %v: %s", cut.name, status, time.Since(start).Round(time.Millisecond), body)
		if status, body := a.Get("/readyz", ""); status != http.StatusOK {
			t.Errorf("partitioned from %s: /readyz = %d %s, want 200: the process can serve", cut.name, status, body)
		}
		ns.Heal()
		start = time.Now()
		a.WaitReady("/readyz?full=1")
		t.Logf("healed: ready again in %v", time.Since(start).Round(time.Millisecond))
	}
}
