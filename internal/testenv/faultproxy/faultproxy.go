// Package faultproxy is internal/faultproxy for tests: a TCP proxy that delays, stalls, holds
// back or cuts the traffic to a server on the test's command. New and Up fail the test
// instead of returning an error, the proxy is shut down when the test ends, and Await fails
// the test when nothing came. It imports nothing from seckill but internal/faultproxy, so
// that the tests of every package (internal/dlock's included) can use it.
package faultproxy

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/faultproxy"
)

// Proxy is a faultproxy.Proxy whose Up fails the test. It is safe for concurrent use.
type Proxy struct{ *faultproxy.Proxy }

// TB is what New and Up need of their caller; a testing.TB has it.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// New starts a proxy to target on addr ("" for any free loopback port); it is shut down when
// the test ends. A proxy brought Up again after Down listens on the same port, so give an
// addr outside the kernel's ephemeral range when the test does that (servers.StableProxy
// picks one, and picks again when another process takes it first).
func New(t TB, addr, target string) *Proxy {
	t.Helper()
	p, err := faultproxy.Open(addr, target)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(p.Close)
	return &Proxy{p}
}

// Up listens on the proxy's address again (and forwards again, if it was stalled).
func (p *Proxy) Up(t TB) {
	t.Helper()
	if err := p.Proxy.Up(); err != nil {
		t.Fatalf("%v", err)
	}
}

// Cut is one request whose reply the proxy loses (see faultproxy.Cut).
type Cut struct{ *faultproxy.Cut }

// CutReply arms the proxy to lose the reply to the next chunk match accepts (see
// faultproxy.Proxy.CutReply).
func (p *Proxy) CutReply(match func(chunk []byte) bool) *Cut { return &Cut{p.Proxy.CutReply(match)} }

// Await waits up to d for a reply to be cut, and fails the test otherwise.
func (c *Cut) Await(t testing.TB, d time.Duration) {
	t.Helper()
	if err := c.Wait(d); err != nil {
		t.Fatal(err)
	}
}

// Hold is one chunk held back by the proxy (see faultproxy.Hold).
type Hold struct{ *faultproxy.Hold }

// HoldNext arms the proxy to hold the next chunk match accepts (see
// faultproxy.Proxy.HoldNext).
func (p *Proxy) HoldNext(match func(chunk []byte) bool) *Hold { return &Hold{p.Proxy.HoldNext(match)} }

// Await waits up to d for a chunk to be held, and fails the test otherwise.
func (h *Hold) Await(t testing.TB, d time.Duration) {
	t.Helper()
	if err := h.Wait(d); err != nil {
		t.Fatal(err)
	}
}
