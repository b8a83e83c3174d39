package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// PatroniNode is one node of a Patroni cluster: a Patroni process and the PostgreSQL it runs,
// both in a PID namespace of their own, so that Kill ends them all at once, as a crash of
// their host would, and so do the death of the program that started them. Its methods are
// safe for concurrent use.
type PatroniNode struct {
	Name string
	Addr string // host:port where clients reach its PostgreSQL
	API  string // http://host:port of its REST API

	cluster *Patroni
	dir     string // its own: config/, data/, pgpass
	bins    patroniBinaries
	ns      *Netns // nil: on loopback
	log     *Buffer

	mu     sync.Mutex
	proc   *Process // unshare, whose child is the namespace's init (Patroni); nil while stopped
	paused []int    // host pids of the WAL senders PauseWALSenders stopped
}

// patroniBinaries are the programs a node runs, and the postgres OS user it runs as.
type patroniBinaries struct {
	patroni, unshare, setpriv, pgBin string
	cred                             *syscall.Credential
}

// patroniBins finds what a node needs, or says why it cannot run here (ErrUnavailable).
func patroniBins() (b patroniBinaries, err error) {
	if b.patroni, err = PatroniBin(); err != nil {
		return b, err
	}
	if b.unshare, err = LookBin("unshare", "unshare (util-linux) not found: each Patroni node runs in a PID namespace of its own"); err != nil {
		return b, err
	}
	if b.setpriv, err = LookBin("setpriv", "setpriv (util-linux) not found: Patroni runs as the postgres user"); err != nil {
		return b, err
	}
	if b.pgBin, err = pgBinDir(); err != nil {
		return b, err
	}
	b.cred, err = postgresUser()
	return b, err
}

// newNode makes the node's directory and configuration: config/00-patroni.yml is the
// project's (base), config/10-node.yml what is the node's own and what the tests change.
func (c *Patroni) newNode(name string, opt PatroniOptions, bins patroniBinaries, base []byte) (*PatroniNode, error) {
	n := &PatroniNode{Name: name, cluster: c, dir: filepath.Join(c.dir, name), bins: bins, log: &Buffer{}}
	pgAddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	apiAddr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	etcd := make([]string, len(opt.Etcd))
	for i, u := range opt.Etcd {
		etcd[i] = strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	}
	// Where the node listens, and where the other nodes reach it (its connect addresses).
	pgListen, apiListen, pgConnect, apiConnect := pgAddr, apiAddr, pgAddr, apiAddr
	if opt.Netns {
		if n.ns, err = StartNetns(opt.Name + "-" + name); err != nil {
			return n, err
		}
		_, pgPort, _ := net.SplitHostPort(pgAddr)
		_, apiPort, _ := net.SplitHostPort(apiAddr)
		pgListen, apiListen = net.JoinHostPort(n.ns.Inside, pgPort), net.JoinHostPort(n.ns.Inside, apiPort)
		// Another namespace reaches this one only through the root namespace: through
		// forwarders on its host end, an address of the root namespace. So do its etcd calls.
		if pgConnect, err = n.ns.Forward(pgListen); err != nil {
			return n, err
		}
		if apiConnect, err = n.ns.Forward(apiListen); err != nil {
			return n, err
		}
		for i, e := range etcd {
			if etcd[i], err = n.ns.Forward(e); err != nil {
				return n, err
			}
		}
	}
	n.Addr, n.API = pgListen, "http://"+apiListen
	synchronous := !opt.Async
	node := map[string]any{
		"scope": c.Scope, "namespace": "/launch-patroni/", "name": name,
		"restapi": map[string]any{"listen": apiListen, "connect_address": apiConnect,
			"authentication": map[string]string{"username": c.restUser, "password": c.restPass}},
		"etcd3":     map[string]any{"hosts": etcd, "use_proxies": opt.Netns}, // use_proxies: not the members' own URLs, unreachable from a namespace
		"bootstrap": map[string]any{"dcs": map[string]any{"synchronous_mode": synchronous}},
		"postgresql": map[string]any{
			"listen": pgListen, "connect_address": pgConnect,
			"data_dir": filepath.Join(n.dir, "data"), "pgpass": filepath.Join(n.dir, "pgpass"), "bin_dir": bins.pgBin,
			"authentication": map[string]any{
				"superuser":   map[string]string{"username": "postgres", "password": c.Password},
				"replication": map[string]string{"username": "replicator", "password": c.Password},
			},
			// No Unix socket: a node restarted in a new PID namespace could find its old
			// socket's lock file naming a live pid there. Durability against a crash of the
			// machine is not what these tests are about (a killed process loses nothing the
			// kernel has), so no fsync, as for every PostgreSQL the tests start; but
			// full_page_writes stays on, which pg_rewind needs.
			"parameters": map[string]any{"unix_socket_directories": "", "fsync": "off", "shared_buffers": "16MB"},
		},
	}
	conf, _ := json.MarshalIndent(node, "", "  ") // JSON is YAML
	confDir := filepath.Join(n.dir, "config")
	for _, f := range []struct {
		name string
		data []byte
	}{{"00-patroni.yml", base}, {"10-node.yml", conf}} {
		if err := os.MkdirAll(confDir, 0o700); err != nil {
			return n, err
		}
		if err := os.WriteFile(filepath.Join(confDir, f.name), f.data, 0o600); err != nil {
			return n, err
		}
	}
	return n, chownAll(n.dir, bins.cred)
}

// chownAll gives dir and everything in it to the user of cred.
func chownAll(dir string, cred *syscall.Credential) error {
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}

// Start starts the node (again, on its data: an old primary rejoins as a standby, rewound if
// it must be) and returns once Patroni runs; WaitPrimary and WaitReplicating wait for the rest.
// It does nothing while the node runs.
func (n *PatroniNode) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		return nil
	}
	// The node is gone whole (Kill), so a postmaster.pid left behind is stale; in a new PID
	// namespace its pid could be a live process's.
	_ = os.Remove(filepath.Join(n.dir, "data", "postmaster.pid"))
	b := n.bins
	args := []string{"--pid", "--fork", "--kill-child", "--mount-proc", // Patroni is the namespace's init
		b.setpriv, fmt.Sprintf("--reuid=%d", b.cred.Uid), fmt.Sprintf("--regid=%d", b.cred.Gid), "--clear-groups",
		"--pdeathsig=KILL", // after the change of user, which clears unshare's --kill-child
		b.patroni, filepath.Join(n.dir, "config")}
	cmd := exec.Command(b.unshare, args...)
	if n.ns != nil {
		cmd = n.ns.Exec(append([]string{b.unshare}, args...)...)
	}
	cmd.Dir = n.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + n.dir, "LANG=C.UTF-8", "LC_ALL=C.UTF-8"}
	proc, err := StartProcess(cmd, n.log)
	if err != nil {
		return fmt.Errorf("start Patroni %s: %w", n.Name, err)
	}
	n.proc = proc
	return nil
}

// Running reports whether the node was started and not killed since.
func (n *PatroniNode) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil && !n.proc.Exited()
}

// Kill sends SIGKILL to the node's PID namespace's init, Patroni: the kernel kills every
// other process in it, its PostgreSQL's included, at once. It waits (10 s at most) until
// they are gone. It does nothing while the node is stopped.
func (n *PatroniNode) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return nil
	}
	defer func() { n.proc, n.paused = nil, nil }()
	if pid := initOf(n.proc.Pid()); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// unshare exits once its child, the init, has; the init, once every process of its
	// namespace has. Killing unshare too kills the init (its parent-death signal), if the
	// child was not found.
	if !n.proc.Wait(5 * time.Second) {
		n.proc.Stop(syscall.SIGKILL, 5*time.Second)
	}
	if !n.proc.Exited() {
		return fmt.Errorf("Patroni node %s still running 10s after SIGKILL", n.Name)
	}
	return nil
}

// initOf returns the pid of the child of unshare (pid), the init of the PID namespace it
// made, or 0.
func initOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	var child int
	if _, err := fmt.Sscan(string(b), &child); err != nil {
		return 0
	}
	return child
}

// Log is what the node's Patroni and PostgreSQL printed, across its restarts.
func (n *PatroniNode) Log() *Buffer { return n.log }

// DSN is the URL of the node's postgres database as the postgres role, whatever its role.
func (n *PatroniNode) DSN() string { return n.cluster.dsn(n.Addr, "") }

// IsPrimary reports whether the node's REST API answers GET /primary with 200 within 2 s.
func (n *PatroniNode) IsPrimary() bool {
	status, _, err := n.rest("GET", "/primary", "", 2*time.Second)
	return err == nil && status == http.StatusOK
}

// Isolate cuts the node's namespace off silently (see Netns.Isolate): every packet between the
// node and anything else is dropped, without RST or ICMP. Rejoin lifts it. Only for a
// cluster started with PatroniOptions.Netns.
func (n *PatroniNode) Isolate() error {
	if n.ns == nil {
		return fmt.Errorf("isolate %s: not in a network namespace (PatroniOptions.Netns)", n.Name)
	}
	return n.ns.Isolate()
}

// Rejoin lifts Isolate.
func (n *PatroniNode) Rejoin() error {
	if n.ns == nil {
		return nil
	}
	return n.ns.Rejoin()
}

// rest performs a request to the node's REST API, with the cluster's basic auth, within d.
func (n *PatroniNode) rest(method, path, body string, d time.Duration) (int, string, error) {
	req, err := http.NewRequest(method, n.API+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.SetBasicAuth(n.cluster.restUser, n.cluster.restPass)
	hc := http.Client{Timeout: d, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(reply)), err
}
