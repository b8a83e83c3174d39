package procs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// zkJars are the jars a ZooKeeper member runs from, as Debian's zookeeper package installs
// them: zookeeper.jar names its own dependencies in its manifest; slf4j-simple writes its log
// to stderr.
var zkJars = []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-simple.jar"}

// ZooKeeperTick is the members' tick: sessions of 1 s to 30 s, elections after 2 s of silence.
const ZooKeeperTick = 500 * time.Millisecond

// ZooKeeperJava returns java's path and ZooKeeper's classpath, or ErrUnavailable.
func ZooKeeperJava() (java, classpath string, err error) {
	const why = "zookeeper not found: ZooKeeper members of its own are started (`make up` installs Debian's zookeeper)"
	java, err = LookBin("java", why)
	if err != nil {
		return "", "", err
	}
	for _, jar := range zkJars {
		if _, err := os.Stat(jar); err != nil {
			return "", "", unavailable(why + ": " + jar + " is missing")
		}
	}
	return java, strings.Join(zkJars, ":"), nil
}

// ZooKeeper is one ensemble member; its data survives Stop. Safe for concurrent use.
type ZooKeeper struct {
	ID   int    // its myid, 1 to n
	Addr string // its client address, 127.0.0.1:port, the same across restarts

	cmd []string // java and its arguments
	log *Buffer
	ens *ZooKeeperEnsemble
	ns  *Netns // the namespace it runs in; nil: the root one

	// Guarded by ens.mu.
	proc   *Process // nil while stopped
	paused bool
}

// ZooKeeperEnsemble is the members of one ensemble. Close kills them and removes their data.
type ZooKeeperEnsemble struct {
	Members []*ZooKeeper

	mu  sync.Mutex
	dir string
}

// Close kills every member and removes their data directories.
func (e *ZooKeeperEnsemble) Close() error {
	for _, m := range e.Members {
		m.Stop()
	}
	return os.RemoveAll(e.dir)
}

// Servers returns the members' client addresses (ZOOKEEPER_SERVERS).
func (e *ZooKeeperEnsemble) Servers() []string {
	out := make([]string, len(e.Members))
	for i, m := range e.Members {
		out[i] = m.Addr
	}
	return out
}

// StartZooKeeperEnsemble starts n members and waits up to 30 s until each serves. The caller
// calls Close; on error it is closed.
func StartZooKeeperEnsemble(n int) (*ZooKeeperEnsemble, error) {
	return StartZooKeeperEnsembleIn(n, nil)
}

// StartZooKeeperEnsembleIn is StartZooKeeperEnsemble with member 1 inside ns (nil: none), so
// that ns.Isolate cuts it off (docs/testing.md#launchers).
func StartZooKeeperEnsembleIn(n int, ns *Netns) (*ZooKeeperEnsemble, error) {
	for try := 1; ; try++ {
		e, err := startZooKeeperEnsemble(n, ns)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "Address already in use") {
			return e, err
		}
	}
}

func startZooKeeperEnsemble(n int, ns *Netns) (_ *ZooKeeperEnsemble, err error) {
	java, cp, err := ZooKeeperJava()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "launch-zookeeper-")
	if err != nil {
		return nil, err
	}
	e := &ZooKeeperEnsemble{Members: make([]*ZooKeeper, n), dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Close())
		}
	}()
	var addrs []string // a client, a quorum and an election address per member, all distinct
	for seen := map[string]bool{}; len(addrs) < 3*n; {
		a, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	if ns != nil { // member 1 listens inside
		for k := range 3 {
			_, port, _ := net.SplitHostPort(addrs[k])
			addrs[k] = net.JoinHostPort(ns.Inside, port)
		}
	}
	views := make([][]string, n) // views[i]: the server lines of member i's configuration
	for i := range n {
		for j := range n {
			quorum, election := addrs[3*j+1], addrs[3*j+2]
			if ns != nil && i == 0 && j > 0 { // from inside, through forwarders
				if quorum, err = ns.Forward(quorum); err != nil {
					return nil, err
				}
				if election, err = ns.Forward(election); err != nil {
					return nil, err
				}
			}
			_, eport, _ := net.SplitHostPort(election)
			if h, _, _ := net.SplitHostPort(quorum); h != strings.Split(election, ":")[0] {
				return nil, fmt.Errorf("zookeeper member %d: quorum %s and election %s on different hosts", j+1, quorum, election)
			}
			views[i] = append(views[i], fmt.Sprintf("server.%d=%s:%s", j+1, quorum, eport))
		}
	}
	for i := range n {
		m := &ZooKeeper{ID: i + 1, Addr: addrs[3*i], log: &Buffer{}, ens: e}
		if i == 0 {
			m.ns = ns
		}
		data := filepath.Join(dir, "zk"+strconv.Itoa(m.ID))
		if err := os.MkdirAll(data, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(m.ID)+"\n"), 0o600); err != nil {
			return nil, err
		}
		cfg := filepath.Join(data, "zoo.cfg")
		if err := os.WriteFile(cfg, []byte(zooCfg(data, m.Addr, views[i])), 0o600); err != nil {
			return nil, err
		}
		m.cmd = []string{java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dzookeeper.admin.enableServer=false", "-Dzookeeper.jmx.log4j.disable=true",
			"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true",
			"-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg}
		e.Members[i] = m
	}
	procs := make([]*Process, n)
	for i, m := range e.Members { // all first: none serves before a majority runs
		if procs[i], err = m.run(); err != nil {
			return nil, err
		}
	}
	for i, m := range e.Members {
		if err := m.await(procs[i], true); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// zooCfg is a member's configuration: loopback only, no admin server, the four-letter words
// the launcher asks (srvr, cons) and operators use (ruok, mntr); peers empty: standalone.
func zooCfg(data, client string, peers []string) string {
	host, port, _ := net.SplitHostPort(client)
	lines := []string{
		"tickTime=" + strconv.Itoa(int(ZooKeeperTick/time.Millisecond)),
		"initLimit=20", "syncLimit=4",
		"minSessionTimeout=1000", "maxSessionTimeout=30000",
		"dataDir=" + data,
		"clientPortAddress=" + host, "clientPort=" + port,
		"admin.enableServer=false",
		"4lw.commands.whitelist=srvr,cons,ruok,mntr",
		"autopurge.snapRetainCount=3", "autopurge.purgeInterval=1",
	}
	if len(peers) > 1 {
		lines = append(lines, peers...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// run starts the member's process unless it runs.
func (m *ZooKeeper) run() (*Process, error) {
	m.ens.mu.Lock()
	defer m.ens.mu.Unlock()
	if m.proc != nil {
		return nil, nil
	}
	cmd := exec.Command(m.cmd[0], m.cmd[1:]...)
	if m.ns != nil { // java by its path: the launcher finds its libraries beside it
		cmd = m.ns.Exec(m.cmd...)
	}
	proc, err := StartProcess(cmd, m.log)
	if err != nil {
		return nil, fmt.Errorf("start zookeeper member %d: %w", m.ID, err)
	}
	m.proc, m.paused = proc, false
	return proc, nil
}

// Start restarts a stopped member and waits up to 30 s until it serves (without a majority,
// until its port accepts).
func (m *ZooKeeper) Start() error {
	proc, err := m.run()
	if err != nil || proc == nil {
		return err
	}
	up := 0
	for _, o := range m.ens.Members {
		if o.up() {
			up++
		}
	}
	return m.await(proc, up > len(m.ens.Members)/2)
}

// await waits up to 30 s until the member serves, or, unless serving, until its client port
// accepts connections.
func (m *ZooKeeper) await(proc *Process, serving bool) error {
	ready, what := func() bool { return m.Mode() != "" }, "serving"
	if !serving {
		ready, what = m.accepts, "accepting connections"
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if proc.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("zookeeper member %d on %s not %s within 30s (exited: %v); log:\n%s",
				m.ID, m.Addr, what, proc.Exited(), m.log.Tail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// Stop kills the member and waits for it to exit; its data stays.
func (m *ZooKeeper) Stop() {
	m.ens.mu.Lock()
	defer m.ens.mu.Unlock()
	if m.proc == nil {
		return
	}
	m.proc.Stop(syscall.SIGKILL, time.Minute) // works on a paused member too
	m.proc, m.paused = nil, false
}

// Pause freezes the member (SIGSTOP) until Resume.
func (m *ZooKeeper) Pause() error { return m.signal(syscall.SIGSTOP, true) }

// Resume continues a paused member (SIGCONT).
func (m *ZooKeeper) Resume() error { return m.signal(syscall.SIGCONT, false) }

func (m *ZooKeeper) signal(sig syscall.Signal, paused bool) error {
	m.ens.mu.Lock()
	defer m.ens.mu.Unlock()
	if m.proc == nil {
		return fmt.Errorf("signal %v to zookeeper member %d: not running", sig, m.ID)
	}
	if err := m.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to zookeeper member %d: %w", sig, m.ID, err)
	}
	m.paused = paused
	return nil
}

// Pid is the member's process id, 0 while it is stopped.
func (m *ZooKeeper) Pid() int {
	m.ens.mu.Lock()
	defer m.ens.mu.Unlock()
	if m.proc == nil {
		return 0
	}
	return m.proc.Pid()
}

// Log is what the member printed, across its restarts.
func (m *ZooKeeper) Log() string { return m.log.String() }

// accepts reports whether the member's client port accepts a connection within a second.
func (m *ZooKeeper) accepts() bool {
	conn, err := net.DialTimeout("tcp", m.Addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// up reports whether the member runs and is not paused.
func (m *ZooKeeper) up() bool {
	m.ens.mu.Lock()
	defer m.ens.mu.Unlock()
	return m.proc != nil && !m.paused
}
