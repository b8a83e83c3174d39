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

// ErrUnavailable is wrapped by launchers that cannot run here: a binary missing, or not root.
var ErrUnavailable = errors.New("launch: unavailable here")

// unavailable is an error that wraps ErrUnavailable and says why.
type unavailable string

func (u unavailable) Error() string        { return string(u) }
func (u unavailable) Is(target error) bool { return target == ErrUnavailable }

// FreeAddr returns a free loopback host:port below the ephemeral range, never the same twice
// (docs/testing.md#launchers). Safe for concurrent use.
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

// Buffer is a bytes.Buffer safe for concurrent use.
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

// LookBin finds name on PATH, /usr/bin or /usr/local/bin, or returns ErrUnavailable saying why.
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

// StableProxy starts a fault proxy to target on a FreeAddr port; the caller closes it.
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
