package deploycheck_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seckill/seckill/internal/testenv/missing"
)

// checkComposeLB checks that the load balancer's environment names the API replicas the way
// deploy/haproxy/haproxy.cfg reads it: LB_API_DNS is the api service's name and the port its
// HTTP_ADDR listens on. Without it the config has no server at all.
func checkComposeLB(c composeFile) []error {
	api, lb := c.project.Services["api"], c.project.Services["lb"]
	addr := api.Environment["HTTP_ADDR"]
	if addr == nil {
		return []error{fmt.Errorf("service api: no HTTP_ADDR")}
	}
	_, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return []error{fmt.Errorf("service api: HTTP_ADDR %q: %v", *addr, err)}
	}
	want := net.JoinHostPort("api", port)
	if got := lb.Environment["LB_API_DNS"]; got == nil || *got != want {
		return []error{fmt.Errorf("service lb: LB_API_DNS is %v, want %s (deploy/haproxy/haproxy.cfg makes each address DNS gives for it a server)", got, want)}
	}
	// /metrics and the admin routes off the load balancer's public path: on ADMIN_ADDR, which
	// only the admin frontend reaches.
	admin := api.Environment["ADMIN_ADDR"]
	if admin == nil {
		return []error{fmt.Errorf("service api: no ADMIN_ADDR: /metrics and the admin routes would be served through the load balancer")}
	}
	_, adminPort, err := net.SplitHostPort(*admin)
	if err != nil || adminPort == port {
		return []error{fmt.Errorf("service api: ADMIN_ADDR %q: want a port other than HTTP_ADDR's", *admin)}
	}
	if got := lb.Environment["LB_ADMIN_DNS"]; got != nil && *got != net.JoinHostPort("api", adminPort) {
		return []error{fmt.Errorf("service lb: LB_ADMIN_DNS is %s, want %s, the replicas' ADMIN_ADDR", *got, net.JoinHostPort("api", adminPort))}
	}
	return nil
}

// TestComposeLoadBalancer: compose's lb environment points HAProxy at the replicas, and the
// config file compose mounts is valid for HAProxy with exactly that environment (haproxy -c,
// Debian's haproxy, which `make up` installs). A copy without LB_API_DNS, or whose api has no
// ADMIN_ADDR, is refused.
func TestComposeLoadBalancer(t *testing.T) {
	c, err := loadCompose(t, filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatalf("load compose.yaml: %v", err)
	}
	for _, err := range checkComposeLB(c) {
		t.Error(err)
	}
	bad, err := mutateCompose(t, func(m map[string]any) {
		delete(m["services"].(map[string]any)["lb"].(map[string]any)["environment"].(map[string]any), "LB_API_DNS")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(checkComposeLB(bad)) == 0 {
		t.Error("a compose file whose lb has no LB_API_DNS passed the check")
	}
	public, err := mutateCompose(t, func(m map[string]any) {
		delete(m["services"].(map[string]any)["api"].(map[string]any)["environment"].(map[string]any), "ADMIN_ADDR")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(checkComposeLB(public)) == 0 {
		t.Error("a compose file whose api has no ADMIN_ADDR (/metrics and admin routes through the load balancer) passed the check")
	}

	bin, err := exec.LookPath("haproxy")
	if err != nil {
		missing.Skip(t, "haproxy not found (`make up` installs Debian's haproxy)")
	}
	cmd := exec.Command(bin, "-c", "-f", filepath.Join(repoRoot, "deploy/haproxy/haproxy.cfg"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range c.project.Services["lb"].Environment {
		if v != nil {
			cmd.Env = append(cmd.Env, k+"="+*v)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("haproxy -c with compose's lb environment: %v\n%s", err, out)
	}
}
