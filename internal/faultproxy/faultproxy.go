// Package faultproxy is a TCP proxy for fault injection: it forwards a loopback port to a
// server and, on its caller's command, delays the traffic, stalls it, holds back one request,
// loses one reply, or makes the server unreachable and reachable again, without touching the
// server itself. The lab (internal/launch's Sentinels) and the fault tests use it; the tests
// go through internal/testenv/faultproxy, which fails the test instead of returning errors.
// It imports nothing from seckill, nor package testing.
package faultproxy

import (
	"fmt"
	"net"
	"sync"
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
	closed  chan struct{} // closed by Close: a held chunk is dropped
	once    sync.Once
	wg      sync.WaitGroup
}

// Open starts a proxy to target on addr ("" for any free loopback port), or returns the error
// of its listen (the address taken, say). The caller owns it: Close shuts it down. A proxy
// brought Up again after Down listens on the same port, so give an addr outside the kernel's
// ephemeral range when the caller does that (launch.StableProxy picks one, and picks again
// when another process takes it first).
func Open(addr, target string) (*Proxy, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	p := &Proxy{addr: addr, target: target, conns: make(map[net.Conn]struct{}), closed: make(chan struct{})}
	if err := p.up(); err != nil {
		return nil, err
	}
	return p, nil
}

// Close shuts the proxy down: its listener, its connections, a held chunk (dropped). It
// waits for its goroutines to end. Later calls do nothing.
func (p *Proxy) Close() {
	p.once.Do(func() {
		close(p.closed)
		p.Down()
		p.wg.Wait()
	})
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
func (p *Proxy) Up() error { return p.up() }

func (p *Proxy) up() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("proxy listen on %s: %w", p.addr, err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	p.wg.Add(1)
	go p.accept(ln)
	return nil
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
