//go:build linux

package chaos_test

import (
	"net"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy on a loopback port that the test controls: it forwards to target,
// can delay every chunk of data in both directions (SetLatency), and can make the target
// unreachable (Down: live connections cut, new ones refused) and reachable again (Up).
type proxy struct {
	addr   string
	target string

	mu      sync.Mutex
	ln      net.Listener // nil while down
	conns   map[net.Conn]struct{}
	latency time.Duration
	wg      sync.WaitGroup
}

// newProxy starts a proxy to target; it is shut down when the test ends.
func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{addr: freeAddr(t), target: target, conns: make(map[net.Conn]struct{})}
	p.Up(t)
	t.Cleanup(func() {
		p.Down()
		p.wg.Wait()
	})
	return p
}

// Addr is where clients connect.
func (p *proxy) Addr() string { return p.addr }

// SetLatency delays each chunk of data by d in each direction (0: none).
func (p *proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

// Down closes the listener, so new connections are refused, and cuts every live one.
func (p *proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Up listens on the proxy's address again.
func (p *proxy) Up(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy listen on %s: %v", p.addr, err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
}

func (p *proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = down.Close()
			continue
		}
		if !p.track(ln, down, up) {
			_, _ = down.Close(), up.Close()
			return
		}
		p.wg.Add(2)
		go p.pipe(up, down)
		go p.pipe(down, up)
	}
}

// track records a connection pair unless the listener was closed meanwhile.
func (p *proxy) track(ln net.Listener, down, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != ln {
		return false
	}
	p.conns[down], p.conns[up] = struct{}{}, struct{}{}
	return true
}

// pipe copies src to dst, each chunk after the current latency.
func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer p.forget(dst, src)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := p.currentLatency(); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) forget(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) currentLatency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency
}
