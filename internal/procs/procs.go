// Package procs starts the processes the service runs with, from built binaries, for the
// lab's runner (internal/labrun) and, through internal/launch, for the tests: the API from a
// binary its caller names (StartAPI, StartAPIs), redis-server (StartRedis; a Redis Cluster,
// StartRedisCluster; a Sentinel deployment, StartSentinels; a server whose wall clock its
// caller steps, StartRedisFakeClock), and network namespaces that an API process runs in and
// that its caller partitions from PostgreSQL or Redis (StartNetns, StartAPIIn). Each listens
// on a free loopback port (FreeAddr) and dies with the program that started it (Pdeathsig).
// Nothing here builds code or knows of package testing.
//
// Each thing started belongs to its caller, who stops it with its Close (Stop, for one whose
// Stop and Start may alternate) and removes what it left on disk. A launcher that lacks a
// binary or a privilege returns an error that wraps ErrUnavailable.
package procs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/seckill/seckill/internal/faultproxy"
)

// ErrUnavailable is wrapped by the errors of launchers that cannot run here: a binary is
// missing (redis-server, etcd, PostgreSQL's, patroni, pgbouncer, libfaketime, ip, nft) or they need root.
var ErrUnavailable = errors.New("launch: unavailable here")

// unavailable is an error that wraps ErrUnavailable and says why.
type unavailable string

func (u unavailable) Error() string        { return string(u) }
func (u unavailable) Is(target error) bool { return target == ErrUnavailable }

// FreeAddr returns a loopback host:port that is free now and lies below the kernel's
// ephemeral port range, so that no outgoing connection takes it before a server binds it, or
// while a server that is stopped and started again is down. It never returns a port twice in
// one process: a server stopped for a while (an etcd member, a Redis restarted on its port)
// keeps its port for its restart, which another caller in the same process could otherwise
// get and bind meanwhile (TestEtcdClusterQuorumLoss once found its member's port taken).
// It is safe for concurrent use.
func FreeAddr() (string, error) {
	low := ephemeralLow()
	for range 200 {
		port := 10000 + rand.IntN(max(low-10000, 1))
		if _, taken := handedOut.LoadOrStore(port, true); taken {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free loopback port between 10000 and %d", low)
}

// handedOut holds the ports FreeAddr has returned (or found taken) in this process.
var handedOut sync.Map // int -> true

// ephemeralLow is the first port of the kernel's ephemeral range (32768 if unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
			return n
		}
	}
	return 32768
}

// Buffer is a bytes.Buffer that a server's log output and its reader may share. It is safe
// for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail returns the last n lines.
func (b *Buffer) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// LookBin returns the path of the program name on PATH, in /usr/bin or in /usr/local/bin
// (where Debian's packages and `make up` put them), or an error wrapping ErrUnavailable that
// says why it is needed.
func LookBin(name, why string) (string, error) {
	for _, p := range []string{name, "/usr/bin/" + name, "/usr/local/bin/" + name} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", unavailable(why)
}

// RedisBin returns the path of redis-server.
func RedisBin() (string, error) {
	return LookBin("redis-server", "redis-server not found: servers of its own are started (`make up` installs it)")
}

// StableProxy starts a fault proxy to target on a port FreeAddr picks, so that Down and Up
// keep its address; the caller closes it. Another process may bind the port between
// FreeAddr's check and the proxy's listen: it picks another then.
func StableProxy(target string) (*faultproxy.Proxy, error) {
	var last error
	for range 20 {
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		p, err := faultproxy.Open(addr, target)
		if err == nil {
			return p, nil
		}
		if last = err; !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	return nil, last
}

// Unavailable returns an error that wraps ErrUnavailable and says why.
func Unavailable(why string) error { return unavailable(why) }
