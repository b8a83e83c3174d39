package servers_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestEtcdStopStart: a member keeps its data across a crash, and a paused one answers nothing
// until it is resumed.
func TestEtcdStopStart(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	m := servers.StartEtcd(t)
	if !m.Healthy() {
		t.Fatal("not healthy after StartEtcd")
	}
	key := testenv.Name("t")
	etcdPut(t, m, key, "kept")

	m.Stop()
	if m.Healthy() {
		t.Fatal("healthy after Stop")
	}
	m.Start()
	if got, want := etcdGet(t, m, key), "kept"; got != want {
		t.Errorf("after a restart %s = %q, want %q", key, got, want)
	}

	m.Pause()
	if m.Healthy() {
		t.Error("healthy while paused")
	}
	m.Resume()
	if !m.Healthy() {
		t.Error("not healthy after Resume")
	}
	if got, want := servers.EtcdLeader(t, []*servers.Etcd{m}), m; got != want {
		t.Errorf("EtcdLeader = %s, want the only member %s", got.Name, want.Name)
	}
}

// TestEtcdClusterLeaderKill: when the leader of three members is killed, the other two elect
// one of them, and the old leader rejoins when it is started again.
func TestEtcdClusterLeaderKill(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	start := time.Now()
	members := servers.StartEtcdCluster(t, 3)
	t.Logf("3 members healthy in %v", time.Since(start).Round(time.Millisecond))

	old := servers.EtcdLeader(t, members)
	old.Stop()
	killed := time.Now()
	next := servers.EtcdLeader(t, members) // waits for a leader among the running members
	elected := time.Since(killed)
	t.Logf("leader %s killed, %s elected in %v", old.Name, next.Name, elected.Round(time.Millisecond))
	if next == old {
		t.Fatalf("EtcdLeader = the stopped member %s", old.Name)
	}
	if elected > 10*time.Second { // election timeout 1 s: a few rounds at most
		t.Errorf("a new leader took %v", elected)
	}

	old.Start() // a majority runs: Start waits until it is healthy
	for _, m := range members {
		if !m.Healthy() {
			t.Errorf("member %s not healthy after %s rejoined", m.Name, old.Name)
		}
	}
	if got := servers.EtcdLeader(t, members); got == nil {
		t.Error("no leader after the old one rejoined")
	}
}

// TestEtcdClusterQuorumLoss: a member started while the others are down only listens; with a
// second one back the two are healthy again.
func TestEtcdClusterQuorumLoss(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	members := servers.StartEtcdCluster(t, 3)
	for _, m := range members {
		m.Stop()
	}
	members[0].Start() // one of three: Start waits for its port only
	if members[0].Healthy() {
		t.Fatalf("member %s healthy alone", members[0].Name)
	}
	members[1].Start()
	for _, m := range members[:2] {
		if !m.Healthy() {
			t.Errorf("member %s not healthy with two of three members running", m.Name)
		}
	}
	servers.EtcdLeader(t, members)
}

// TestEtcdEndpoints: every endpoint in ETCD_ENDPOINTS (the etcd of `make up`) is healthy.
func TestEtcdEndpoints(t *testing.T) {
	t.Parallel()
	client := &http.Client{Timeout: 5 * time.Second}
	for _, e := range testenv.EtcdEndpoints(t) {
		resp, err := client.Get(strings.TrimSuffix(e, "/") + "/health")
		if err != nil {
			t.Errorf("etcd at %s is unreachable: %v", e, err)
			continue
		}
		var h struct{ Health string }
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil || h.Health != "true" {
			t.Errorf("GET %s/health: %v, health %q; want \"true\"", e, err, h.Health)
		}
	}
}

// etcdPut puts key=value through the member's JSON gateway.
func etcdPut(t *testing.T, m *servers.Etcd, key, value string) {
	t.Helper()
	etcdPost(t, m, "/v3/kv/put", map[string]string{"key": b64(key), "value": b64(value)}, nil)
}

// etcdGet returns the value of key ("" when there is none), read through the member's JSON
// gateway.
func etcdGet(t *testing.T, m *servers.Etcd, key string) string {
	t.Helper()
	var r struct{ Kvs []struct{ Value string } }
	etcdPost(t, m, "/v3/kv/range", map[string]string{"key": b64(key)}, &r)
	if len(r.Kvs) == 0 {
		return ""
	}
	v, err := base64.StdEncoding.DecodeString(r.Kvs[0].Value)
	if err != nil {
		t.Fatalf("range %s: value %q: %v", key, r.Kvs[0].Value, err)
	}
	return string(v)
}

func etcdPost(t *testing.T, m *servers.Etcd, path string, body map[string]string, reply any) {
	t.Helper()
	b, _ := json.Marshal(body)
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(m.ClientURL+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
	if reply != nil {
		if err := json.NewDecoder(resp.Body).Decode(reply); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
