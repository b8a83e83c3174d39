package faultproxy

import (
	"fmt"
	"net"
	"time"
)

// Cut is one request whose reply the proxy loses (see CutReply): the request reaches the
// server and runs, and the connection is cut before its reply reaches the client, as when a
// network fails between the two. A client that retries does so on a new connection.
type Cut struct {
	match func(chunk []byte) bool
	conn  net.Conn      // the client's side of the request's connection, once sent
	done  chan struct{} // closed once the reply is cut
}

// CutReply arms the proxy: the next chunk a client sends that match accepts is forwarded, and
// the connection it came on is closed, both sides, as soon as the server answers on it; the
// answer is dropped. A new CutReply replaces an armed one.
func (p *Proxy) CutReply(match func(chunk []byte) bool) *Cut {
	c := &Cut{match: match, done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = c
	return c
}

// Wait waits up to d for a reply to be cut, and says so if none was.
func (c *Cut) Wait(d time.Duration) error {
	select {
	case <-c.done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("no reply cut within %v", d)
	}
}

// arm notes chunk, from the client on connection client, if it is the one the armed cut
// waits for.
func (p *Proxy) arm(client net.Conn, chunk []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.cut; c != nil && c.conn == nil && c.match(chunk) {
		c.conn = client
	}
}

// cutting reports whether the server's answer to connection client must be dropped and the
// connection closed: the armed cut's request went on it. The cut is then done.
func (p *Proxy) cutting(client net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cut
	if c == nil || c.conn != client {
		return false
	}
	p.cut = nil
	close(c.done)
	return true
}
