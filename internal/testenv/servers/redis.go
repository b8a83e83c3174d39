package servers

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisBin returns the path of redis-server, or skips the test.
func RedisBin(t testing.TB) string {
	return lookBin(t, "redis-server", "redis-server not found: this test starts servers of its own (`make up` installs it)")
}

// Redis is a redis-server process of the test's own, without persistence unless its
// arguments ask for it. Stop and Start may be called in any order; it is killed when the test
// ends. It is safe for concurrent use.
type Redis struct {
	Addr string // 127.0.0.1:port, the same across restarts
	// Dir is its working directory (--dir), the same across restarts: what it saved there
	// (dump.rdb, appendonlydir) is loaded again by Start. Removed when the test ends.
	Dir string

	t    testing.TB
	bin  string
	args []string
	log  *Buffer

	mu   sync.Mutex
	proc *process // nil while stopped
}

// StartRedis starts a redis-server without persistence on a free loopback port and waits
// until it answers PING; extra arguments go to redis-server (they may override the defaults).
// A server that requires a password (--requirepass) is up when it answers NOAUTH; Client does
// not log in to it.
func StartRedis(t testing.TB, extra ...string) *Redis {
	t.Helper()
	bin := RedisBin(t)
	addr := FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	s := &Redis{Addr: addr, Dir: t.TempDir(), t: t, bin: bin, log: &Buffer{}}
	s.args = append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.Dir, "--logfile", "", "--daemonize", "no"}, extra...)
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// StartRedisReplica is StartRedis for a replica of the master at addr (--replicaof): it
// waits until the replica has synced (master_link_status:up). A master of the test's own
// starts the sync at once with --repl-diskless-sync-delay 0 (Redis 7 waits 5 s by default).
func StartRedisReplica(t testing.TB, master string, extra ...string) *Redis {
	t.Helper()
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		t.Fatalf("master address %q: %v", master, err)
	}
	s := StartRedis(t, append([]string{"--replicaof", host, port}, extra...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := s.Client()
	for {
		info, err := rdb.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replica %s of %s not synced: %v\n%s", s.Addr, master, err, info)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Promote makes a replica a master (REPLICAOF NO ONE), as a failover does: it keeps the data
// it had replicated, and takes writes.
func (s *Redis) Promote(t testing.TB) {
	t.Helper()
	s.Do(t, 0, "REPLICAOF", "NO", "ONE")
}

// Start starts the server again and waits until it answers PING: empty, unless it saved to
// Dir (an RDB snapshot it made, or its AOF with --appendonly yes), which it loads. It does
// nothing while the server runs.
func (s *Redis) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return
	}
	proc, err := startProcess(exec.Command(s.bin, s.args...), s.log)
	if err != nil {
		s.t.Fatalf("start redis-server on %s: %v", s.Addr, err)
	}
	s.proc = proc
	if err := waitPing(s.Addr, proc.done); err != nil {
		s.t.Fatalf("redis-server on %s: %v\n%s", s.Addr, err, s.log.Tail(20))
	}
}

// Stop kills the server, as a crash would, and waits for it to exit: it saves nothing on the
// way, so without persistence every key is gone.
func (s *Redis) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	s.proc.stop(syscall.SIGKILL, time.Minute) // works on a paused server too
	s.proc = nil
}

// Pause freezes the server (SIGSTOP): connections stay open and nothing is answered, as
// when a server hangs. Resume lets it go on.
func (s *Redis) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Redis) Resume() { s.signal(syscall.SIGCONT) }

func (s *Redis) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		s.t.Fatalf("signal %v to redis-server on %s: not running", sig, s.Addr)
	}
	if err := s.proc.signal(sig); err != nil {
		s.t.Fatalf("signal %v to redis-server on %s: %v", sig, s.Addr, err)
	}
}

// Log is what the server printed.
func (s *Redis) Log() string { return s.log.String() }

// Client returns a plain client of the server, closed when the test ends. It honours
// context deadlines and retries nothing, so a test sees each reply as the server sent it.
func (s *Redis) Client() *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	s.t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// waitPing waits up to 10 s for a PONG (or a NOAUTH) from addr, or for exited.
func waitPing(addr string, exited <-chan struct{}) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil || redis.IsAuthError(err) { // asking for a password is an answer too
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG within 10s: %w", err)
		}
	}
}

// StartRedisCluster starts n redis-server masters in cluster mode, shares the 16384 slots
// between them, joins them, and waits until every node reports the cluster ok. Their
// addresses (Addrs) seed a cluster client.
func StartRedisCluster(t testing.TB, n int) []*Redis {
	t.Helper()
	servers := make([]*Redis, n)
	buses := make([]string, n)
	for i := range servers {
		_, buses[i], _ = net.SplitHostPort(FreeAddr(t))
		servers[i] = StartRedis(t, "--cluster-enabled", "yes", "--cluster-port", buses[i],
			"--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"), "--cluster-node-timeout", "5000")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, s := range servers {
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := s.Client().Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("CLUSTER ADDSLOTSRANGE on %s: %v", s.Addr, err)
		}
	}
	first := servers[0].Client()
	for i, s := range servers[1:] {
		_, port, _ := net.SplitHostPort(s.Addr)
		if err := first.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", port, buses[i+1]).Err(); err != nil {
			t.Fatalf("CLUSTER MEET %s: %v", s.Addr, err)
		}
	}
	for _, s := range servers {
		waitClusterOK(ctx, t, s, n)
	}
	return servers
}

// waitClusterOK waits until s sees n masters and reports cluster_state:ok.
func waitClusterOK(ctx context.Context, t testing.TB, s *Redis, n int) {
	t.Helper()
	rdb := s.Client()
	want := []string{"cluster_state:ok", "cluster_known_nodes:" + strconv.Itoa(n)}
	for {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, want[0]) && strings.Contains(info, want[1]) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cluster node %s not ok: %v\n%s", s.Addr, err, info)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Addrs returns the servers' addresses.
func Addrs(servers []*Redis) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	return addrs
}
