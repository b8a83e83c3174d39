package launch

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/testenv/missing"
)

// TestPostgresPortTakenRetried: a port another program binds between FreeAddr's check and the
// server's bind makes the server exit, and StartPostgres tries another.
func TestPostgresPortTakenRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("a PostgreSQL cluster of its own")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	handed := 0
	pgAddr = func() (string, error) {
		handed++
		if handed == 1 {
			return taken, nil
		}
		return FreeAddr()
	}
	defer func() { pgAddr = FreeAddr }()
	pg, err := StartPostgres()
	if errors.Is(err, ErrUnavailable) {
		missing.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if handed != 2 || strings.HasSuffix(taken, ":"+pg.port) {
		t.Fatalf("addresses handed out %d, cluster on port %s (taken: %s)", handed, pg.port, taken)
	}
	if !strings.Contains(pg.Log().String(), "already in use") {
		t.Errorf("the first try's log does not say the port was taken:\n%s", pg.Log().Tail(20))
	}
}
