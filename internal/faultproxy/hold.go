package faultproxy

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// Hold is one chunk held back by the proxy (see HoldNext), as a slow network would hold a
// request: sent by the client, not yet arrived.
type Hold struct {
	match func(chunk []byte) bool
	held  chan struct{} // closed once a chunk is held
	freed chan struct{} // closed by Release

	mu      sync.Mutex
	conn    net.Conn // the client's side of the held chunk's connection
	answers []byte   // from the server on that connection, since the chunk was held
}

// HoldNext arms the proxy: the next chunk a client sends that match accepts is held (and
// what follows it on that connection) until Release. What the server answers on that
// connection from then on is kept (Answer). A new HoldNext replaces an armed one.
func (p *Proxy) HoldNext(match func(chunk []byte) bool) *Hold {
	h := &Hold{match: match, held: make(chan struct{}), freed: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = h
	return h
}

// Wait waits up to d for a chunk to be held, and says so if none was.
func (h *Hold) Wait(d time.Duration) error {
	select {
	case <-h.held:
		return nil
	case <-time.After(d):
		return fmt.Errorf("no chunk to hold sent through the proxy within %v", d)
	}
}

// Release lets the held chunk go on.
func (h *Hold) Release() { close(h.freed) }

// Answer is what the server sent on the held chunk's connection since it was held.
func (h *Hold) Answer() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.answers)
}

// holding returns the armed hold if chunk, from the client on connection client, is the one
// it holds: the hold is then taken, and the caller must wait for it to be released.
func (p *Proxy) holding(client net.Conn, chunk []byte) *Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hold
	if h == nil || h.conn != nil || !h.match(chunk) {
		return nil
	}
	h.conn = client
	close(h.held)
	return h
}

// keep records chunk, from the server to connection client, if that is the held chunk's.
func (p *Proxy) keep(client net.Conn, chunk []byte) {
	p.mu.Lock()
	h := p.hold
	p.mu.Unlock()
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == client {
		h.answers = append(h.answers, chunk...)
	}
}
