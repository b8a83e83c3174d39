// Package faultproxy is a TCP proxy for fault tests: it forwards a loopback port to a server
// and, on the test's command, delays the traffic, stalls it, holds back one request, loses one
// reply, or makes the server unreachable and reachable again, without touching the server itself. It imports nothing from seckill,
// so that the tests of every package (internal/dlock's included) can use it.
package faultproxy

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy forwards connections on Addr to its target. It is safe for concurrent use.
type Proxy struct {
	addr   string
	target string

	mu      sync.Mutex
	ln      net.Listener // nil while down
	conns   map[net.Conn]struct{}
	latency [2]time.Duration // by direction: toServer, toClient
	stalled bool
	hold    *Hold         // the last HoldNext's
	cut     *Cut          // the armed CutReply's, until its reply is cut
	closed  chan struct{} // closed when the test ends: a held chunk is dropped
	wg      sync.WaitGroup
}

// New starts a proxy to target on addr ("" for any free loopback port); it is shut down when
// the test ends. A proxy brought Up again after Down listens on the same port, so give an
// addr outside the kernel's ephemeral range when the test does that.
func New(t testing.TB, addr, target string) *Proxy {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	p := &Proxy{addr: addr, target: target, conns: make(map[net.Conn]struct{}), closed: make(chan struct{})}
	p.Up(t)
	t.Cleanup(func() {
		close(p.closed)
		p.Down()
		p.wg.Wait()
	})
	return p
}

// Addr is where clients connect.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Directions of the traffic.
const (
	toServer = 0
	toClient = 1
)

// SetLatency delays each chunk of data by d in each direction (0: none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = [2]time.Duration{d, d}
}

// SetReplyLatency delays each chunk the server sends by d, and forwards what clients send at
// once: requests reach the server, their answers are late.
func (p *Proxy) SetReplyLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = [2]time.Duration{0, d}
}

// Stall keeps every connection open, and accepts new ones, but forwards nothing any more:
// the server looks hung.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Down closes the listener, so new connections are refused, and cuts every live one: the
// server looks down.
func (p *Proxy) Down() {
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

// Up listens on the proxy's address again (and forwards again, if it was stalled).
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	if p.ln != nil {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy listen on %s: %v", p.addr, err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	p.wg.Add(1)
	go p.accept(ln)
}

func (p *Proxy) accept(ln net.Listener) {
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
		go p.pipe(up, down, toServer)
		go p.pipe(down, up, toClient)
	}
}

// track records a connection pair unless the listener was closed meanwhile.
func (p *Proxy) track(ln net.Listener, down, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != ln {
		return false
	}
	p.conns[down], p.conns[up] = struct{}{}, struct{}{}
	return true
}

// pipe copies src to dst, each chunk after the current latency of direction dir, dropping it
// while stalled.
func (p *Proxy) pipe(dst, src net.Conn, dir int) {
	defer p.wg.Done()
	defer p.forget(dst, src)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if dir == toServer {
				if h := p.holding(src, buf[:n]); h != nil {
					select {
					case <-h.freed:
					case <-p.closed:
						return
					}
				}
				p.arm(src, buf[:n])
			} else {
				p.keep(dst, buf[:n])
				if p.cutting(dst) {
					return // forget closes both sides: the reply is lost
				}
			}
			latency, stalled := p.state(dir)
			if latency > 0 {
				time.Sleep(latency)
			}
			if !stalled {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) forget(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *Proxy) state(dir int) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency[dir], p.stalled
}
