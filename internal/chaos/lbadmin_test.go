//go:build linux

package chaos_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/contract"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestAdminOffThePublicPath: two API processes with ADMIN_ADDR behind HAProxy with the
// project's configuration and its admin frontend (LB_ADMIN_ADDR, LB_ADMIN1, LB_ADMIN2).
// Through the public frontend, /metrics and the admin routes answer 404 not_found (whatever
// the token) and purchases sell; through the admin frontend, an operator creates a product,
// audits it and reads /metrics.
func TestAdminOffThePublicPath(t *testing.T) {
	log := faultTest(t)
	servers.HAProxyBin(t)
	b, _ := sharedBackend(t)
	var apis []*apiProc
	env := map[string]string{}
	for i := 1; i <= 2; i++ {
		admin := servers.FreeAddr(t)
		p := b.startAPI(t, fmt.Sprintf("api%d", i), map[string]string{"ADMIN_ADDR": admin})
		p.WaitReady("/readyz")
		apis = append(apis, p)
		env[fmt.Sprintf("LB_ADMIN%d", i)] = admin
	}
	env["LB_ADMIN_ADDR"] = servers.FreeAddr(t)
	h := servers.StartHAProxy(t, []string{strings.TrimPrefix(apis[0].Base, "http://"), strings.TrimPrefix(apis[1].Base, "http://")}, env)
	admin := "http://" + env["LB_ADMIN_ADDR"]
	c := &lbClient{t: t, http: contract.Client(t, &http.Client{Timeout: 10 * time.Second})}
	c.token = adminToken
	newProduct := `{"name":"lb admin","stock":5,"strategy":"pessimistic"}`

	for range 2 { // each server once
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/metrics", ""}, {"POST", "/api/v1/products", newProduct}, {"GET", "/api/v1/products/1/audit", ""},
		} {
			if a := c.do(h.Base, r.method, r.path, r.body); a.status != http.StatusNotFound || a.problem.Code != api.CodeNotFound {
				t.Errorf("public %s %s = %s, want 404 not_found", r.method, r.path, a)
			}
		}
	}
	var created lbAnswer
	testenv.Eventually(t, 15*time.Second, "the admin frontend's servers up and a product created", func() bool {
		created = c.do(admin, "POST", "/api/v1/products", newProduct)
		return created.status == http.StatusCreated
	})
	id := created.body[strings.Index(created.body, `"id":`)+5:]
	id = id[:strings.IndexAny(id, ",}")]
	if a := c.do(h.Base, "POST", "/api/v1/products/"+id+"/purchase", `{"user_id":1}`); a.status != http.StatusCreated {
		t.Errorf("public purchase = %s, want 201", a)
	}
	if a := c.do(admin, "GET", "/api/v1/products/"+id+"/audit", ""); a.status != http.StatusOK {
		t.Errorf("admin audit = %s, want 200", a)
	}
	if a := c.do(admin, "GET", "/metrics", ""); a.status != http.StatusOK || !strings.Contains(a.body, "seckill_backend_up") {
		t.Errorf("admin /metrics = %d, want 200 with seckill_backend_up", a.status)
	}
	log("public frontend: no /metrics, no admin route; admin frontend: product %s created and audited", id)
}
