package dlock_test

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

// The Redlock and cluster tests start redis-server processes of their own, on
// free loopback ports, so that they can stop and restart them without
// touching the shared Redis. They need only the redis-server binary.

// redisServerBin returns the path of redis-server, or skips the test.
func redisServerBin(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"redis-server", "/usr/bin/redis-server", "/usr/local/bin/redis-server"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("redis-server not found: these tests start their own servers (`make up` installs it)")
	return ""
}

// server is a redis-server process of the test's own. Stop and Start may be
// called in any order; t.Cleanup stops it.
type server struct {
	t    testing.TB
	bin  string
	addr string
	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *lockedLog
}

// startServer starts a redis-server without persistence on a free port;
// extra arguments go to redis-server.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	bin := redisServerBin(t)
	port := freePort(t)
	s := &server{t: t, bin: bin, addr: "127.0.0.1:" + strconv.Itoa(port), log: &lockedLog{}}
	s.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--logfile", ""}, extra...)
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// Start starts the server (again, empty) and waits until it answers.
func (s *server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server on %s: %v", s.addr, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	if err := waitPing(s.addr, done); err != nil {
		s.t.Fatalf("redis-server on %s: %v\n%s", s.addr, err, s.log)
	}
}

// Stop kills the server, as a crash would, and waits for it to exit.
func (s *server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.cmd, s.done = nil, nil
}

// client returns a plain client of the server, closed at cleanup. Like the
// clients a Redlock deployment should use, it honours context deadlines.
func (s *server) client() *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	s.t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// waitPing waits up to 10 s for a PONG from addr, or for exited.
func waitPing(addr string, exited <-chan struct{}) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
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

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster starts n redis-server masters in cluster mode, shares the
// 16384 slots between them, joins them, and waits until every node reports
// the cluster ok. It returns the servers; their addresses seed a client.
func startCluster(t testing.TB, n int) []*server {
	t.Helper()
	servers := make([]*server, n)
	buses := make([]int, n)
	for i := range servers {
		buses[i] = freePort(t)
		servers[i] = startServer(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(buses[i]),
			"--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"), "--cluster-node-timeout", "5000")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, s := range servers {
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := s.client().Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("CLUSTER ADDSLOTSRANGE on %s: %v", s.addr, err)
		}
	}
	first := servers[0].client()
	for i, s := range servers[1:] {
		_, port, _ := net.SplitHostPort(s.addr)
		if err := first.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", port, buses[i+1]).Err(); err != nil {
			t.Fatalf("CLUSTER MEET %s: %v", s.addr, err)
		}
	}
	for _, s := range servers {
		waitClusterOK(ctx, t, s, n)
	}
	return servers
}

// waitClusterOK waits until s sees n masters and reports cluster_state:ok.
func waitClusterOK(ctx context.Context, t testing.TB, s *server, n int) {
	t.Helper()
	rdb := s.client()
	want := []string{"cluster_state:ok", "cluster_known_nodes:" + strconv.Itoa(n)}
	for {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, want[0]) && strings.Contains(info, want[1]) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cluster node %s not ok: %v\n%s", s.addr, err, info)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// addrsOf returns the servers' addresses.
func addrsOf(servers []*server) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.addr
	}
	return addrs
}

// lockedLog collects a server's output for failure messages.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
