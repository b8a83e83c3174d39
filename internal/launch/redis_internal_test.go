package launch

import (
	"errors"
	"net"
	"testing"
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
		t.Skip(err)
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
