package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EtcdBin returns the path of etcd, or an error wrapping ErrUnavailable.
func EtcdBin() (string, error) {
	return LookBin("etcd", "etcd not found: etcd members of its own are started (`make up` installs Debian's etcd-server)")
}

// Etcd is one etcd member of the caller's own, alone (StartEtcd) or in a cluster
// (StartEtcdCluster), with etcd's default timing (heartbeat 100 ms, election timeout 1 s); it is
// safe for concurrent use. Stop, Start, Pause and Resume may come in any order, and a member
// restarted after Stop rejoins with its data; its cluster's Close kills it.
type Etcd struct {
	Name      string // the member's name in its cluster
	ClientURL string // http://127.0.0.1:port, the same across restarts

	addr    string // 127.0.0.1:port of ClientURL
	bin     string
	args    []string // without --initial-cluster-state
	log     *Buffer
	cluster *EtcdCluster

	// Guarded by cluster.mu.
	proc   *Process // nil while stopped
	paused bool
	ran    bool // started once: it restarts into an existing cluster
}

// EtcdCluster is the members of one cluster (StartEtcdCluster). Close kills them and
// removes their data.
type EtcdCluster struct {
	Members []*Etcd

	mu  sync.Mutex
	dir string
}

// Close kills every member and removes their data directories.
func (c *EtcdCluster) Close() error {
	for _, m := range c.Members {
		m.Stop()
	}
	return os.RemoveAll(c.dir)
}

// etcdHTTP asks members for their health and status; each request gets a fresh connection,
// so none is left to a member that was killed or paused.
var etcdHTTP = &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// StartEtcd starts a single etcd member on free loopback ports and waits until it is
// healthy. The caller owns its cluster: Close.
func StartEtcd() (*EtcdCluster, error) { return StartEtcdCluster(1) }

// StartEtcdCluster starts n etcd members on free loopback ports as one new cluster and waits
// up to 20 s until each is healthy (GET /health: it has a leader and a quorum read works).
// The caller owns the cluster: Close; on error, it is closed already. Another program (go
// test runs packages in parallel) may bind a port FreeAddr found free before a member does:
// the member exits saying so, and the cluster is started again on other ports.
func StartEtcdCluster(n int) (*EtcdCluster, error) {
	for try := 1; ; try++ {
		c, err := startEtcdCluster(n)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "address already in use") {
			return c, err
		}
	}
}

func startEtcdCluster(n int) (_ *EtcdCluster, err error) {
	bin, err := EtcdBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "launch-etcd-")
	if err != nil {
		return nil, err
	}
	c := &EtcdCluster{Members: make([]*Etcd, n), dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
		}
	}()
	token := fmt.Sprintf("t%x", rand.Uint64()) // a member of another cluster is refused
	var addrs []string                         // a client and a peer address per member, all distinct
	for seen := map[string]bool{}; len(addrs) < 2*n; {
		a, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	initial := make([]string, n)
	for i := range initial {
		initial[i] = fmt.Sprintf("etcd%d=http://%s", i+1, addrs[2*i+1])
	}
	for i := range c.Members {
		name, client, peer := fmt.Sprintf("etcd%d", i+1), "http://"+addrs[2*i], "http://"+addrs[2*i+1]
		c.Members[i] = &Etcd{Name: name, ClientURL: client, addr: addrs[2*i], bin: bin, log: &Buffer{}, cluster: c,
			args: []string{"--name", name, "--data-dir", filepath.Join(dir, name),
				"--listen-client-urls", client, "--advertise-client-urls", client,
				"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
				"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-token", token,
				"--logger", "zap", "--log-outputs", "stderr"}}
	}
	procs := make([]*Process, n)
	for i, m := range c.Members { // all first: none is healthy before a majority runs
		if procs[i], _, err = m.run(); err != nil {
			return nil, err
		}
	}
	for i, m := range c.Members {
		if err := m.await(procs[i], true); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Start starts the member again on its data and waits up to 20 s until it is healthy; or,
// when with it fewer than a majority of its cluster's members run (unpaused), only until its
// client port accepts connections: such a member cannot be healthy, and it serves nothing
// until a majority is back. It does nothing while the member runs.
func (m *Etcd) Start() error {
	proc, quorum, err := m.run()
	if err != nil || proc == nil {
		return err
	}
	return m.await(proc, quorum)
}

// run starts the member's process unless it runs, and reports whether, with it, a majority of
// the cluster's members runs.
func (m *Etcd) run() (*Process, bool, error) {
	c := m.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.proc != nil {
		return nil, false, nil
	}
	state := "new"
	if m.ran {
		state = "existing"
	}
	cmd := exec.Command(m.bin, append(m.args, "--initial-cluster-state", state)...)
	cmd.Env = etcdEnv()
	proc, err := StartProcess(cmd, m.log)
	if err != nil {
		return nil, false, fmt.Errorf("start etcd member %s: %w", m.Name, err)
	}
	m.proc, m.paused, m.ran = proc, false, true
	up := 0
	for _, o := range c.Members {
		if o.proc != nil && !o.paused {
			up++
		}
	}
	return proc, up > len(c.Members)/2, nil
}

// await waits up to 20 s until the member is healthy, or, unless healthy, until its client
// port accepts connections.
func (m *Etcd) await(proc *Process, healthy bool) error {
	ready, what := m.Healthy, "healthy"
	if !healthy {
		ready, what = m.accepts, "accepting connections"
	}
	deadline := time.Now().Add(20 * time.Second)
	for !ready() {
		if proc.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("etcd member %s on %s not %s within 20s (exited: %v); log:\n%s",
				m.Name, m.ClientURL, what, proc.Exited(), m.log.Tail(20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// etcdEnv is this program's environment without the ETCD_* variables, which etcd would read as
// flags (ETCD_ENDPOINTS among them), and with ETCD_UNSUPPORTED_ARCH where etcd 3.4 wants it.
func etcdEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "ETCD_") })
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "ppc64le" {
		env = append(env, "ETCD_UNSUPPORTED_ARCH="+runtime.GOARCH)
	}
	return env
}

// Stop kills the member, as a crash would, and waits for it to exit. Its data stays.
func (m *Etcd) Stop() {
	m.cluster.mu.Lock()
	defer m.cluster.mu.Unlock()
	if m.proc == nil {
		return
	}
	m.proc.Stop(syscall.SIGKILL, time.Minute) // works on a paused member too
	m.proc, m.paused = nil, false
}

// Pause freezes the member (SIGSTOP): connections stay open and nothing is answered, neither
// to clients nor to its peers. Resume lets it go on.
func (m *Etcd) Pause() error { return m.signal(syscall.SIGSTOP, true) }

// Resume continues a paused member (SIGCONT).
func (m *Etcd) Resume() error { return m.signal(syscall.SIGCONT, false) }

func (m *Etcd) signal(sig syscall.Signal, paused bool) error {
	m.cluster.mu.Lock()
	defer m.cluster.mu.Unlock()
	if m.proc == nil {
		return fmt.Errorf("signal %v to etcd member %s: not running", sig, m.Name)
	}
	if err := m.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to etcd member %s: %w", sig, m.Name, err)
	}
	m.paused = paused
	return nil
}

// Log is what the member printed, across its restarts.
func (m *Etcd) Log() string { return m.log.String() }

// Healthy reports whether the member answers GET /health with "true" within a second.
func (m *Etcd) Healthy() bool {
	resp, err := etcdHTTP.Get(m.ClientURL + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct{ Health string }
	return json.NewDecoder(resp.Body).Decode(&h) == nil && h.Health == "true"
}

// accepts reports whether the member's client port accepts a connection within a second.
func (m *Etcd) accepts() bool {
	conn, err := net.DialTimeout("tcp", m.addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// up reports whether the member runs and is not paused.
func (m *Etcd) up() bool {
	m.cluster.mu.Lock()
	defer m.cluster.mu.Unlock()
	return m.proc != nil && !m.paused
}
