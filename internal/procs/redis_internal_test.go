package procs

import (
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/seckill/seckill/internal/testenv/missing"
)

// TestRedisPortTaken: a redis-server whose port another server holds (another test binary
// bound it after FreeAddr found it free) is found out by its process id, though the other
// server answers PING on its address; StartRedis then moves to a new port.
func TestRedisPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("processes of its own")
	}
	t.Parallel()
	first, err := StartRedis()
	if errors.Is(err, ErrUnavailable) {
		missing.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })
	second, err := newRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	_, port, _ := net.SplitHostPort(first.Addr)
	second.Addr = first.Addr
	for i, a := range second.args {
		if a == "--port" {
			second.args[i+1] = port
		}
	}
	if err := second.start(); !errors.Is(err, errPortTaken) {
		t.Fatalf("a server started on a port another holds: %v, want %v", err, errPortTaken)
	}
}

// TestRedisBusPortTaken: a redis-server in cluster mode gets a bus port of its own, not
// port+10000; one whose bus port another process holds exits, and that is told as a taken
// port, so StartRedis moves to new ports rather than failing the test that asked.
func TestRedisBusPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("processes of its own")
	}
	t.Parallel()
	s, err := newRedis("--cluster-enabled", "yes")
	if errors.Is(err, ErrUnavailable) {
		missing.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	_, port, _ := net.SplitHostPort(s.Addr)
	if p, _ := strconv.Atoi(port); s.Bus == "" || s.Bus == strconv.Itoa(p+10000) {
		t.Fatalf("bus port %q for a server on %s, want one FreeAddr handed out", s.Bus, s.Addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", s.Bus))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := s.start(); !errors.Is(err, errPortTaken) {
		t.Fatalf("a server started with its bus port held by another: %v, want %v", err, errPortTaken)
	}
	again, err := StartRedis("--cluster-enabled", "yes")
	if err != nil {
		t.Fatal(err)
	}
	_ = again.Close()
}
