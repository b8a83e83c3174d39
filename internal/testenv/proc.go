package testenv

import (
	"testing"

	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// FreeAddr returns a loopback host:port that nothing listens on right now (see
// servers.FreeAddr).
func FreeAddr(t testing.TB) string { return servers.FreeAddr(t) }

// Buffer is a log buffer a server process and the test share (see servers.Buffer).
type Buffer = servers.Buffer

// StableProxy starts a fault proxy to target on a port that Down and Up keep (see
// servers.StableProxy).
func StableProxy(t testing.TB, target string) *faultproxy.Proxy {
	return servers.StableProxy(t, target)
}
