// Package servers starts servers of a test's own (redis-server, a Redis Cluster) on free
// loopback ports, and holds the small helpers such tests share: a free address, a log buffer.
// It imports nothing of seckill, so the tests of every package can use it, internal/dlock's
// included. Servers started here are killed when the test ends.
package servers

import (
	"bytes"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreeAddr returns a loopback host:port that is free now and lies below the kernel's
// ephemeral port range, so that no outgoing connection takes it before a server binds it, or
// while a server that a test stops and starts again is down.
func FreeAddr(t testing.TB) string {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(10000+rand.IntN(max(low-10000, 1))))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatalf("no free loopback port between 10000 and %d", low)
	return ""
}

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

// Buffer is a bytes.Buffer that a server's log output and the test may share. It is safe
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
