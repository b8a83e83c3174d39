package procs

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
)

// Forward starts a TCP forwarder on the namespace's host end to target, a server of the root
// namespace, and returns the address to give the processes inside in its place; Close stops it.
// Its own connections to target stay healthy whatever Partition does (docs/testing.md).
func (n *Netns) Forward(target string) (string, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", net.JoinHostPort(n.Host, "0"))
	if err != nil {
		return "", fmt.Errorf("forward %s from %s: %w", target, n.Name, err)
	}
	f := &forwarder{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.accept()
	n.mu.Lock()
	n.fwds = append(n.fwds, f)
	n.mu.Unlock()
	return ln.Addr().String(), nil
}

// forwarder copies the connections to ln both ways to target.
type forwarder struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (f *forwarder) accept() {
	defer f.wg.Done()
	for {
		in, err := f.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", f.target)
		if err != nil {
			_ = in.Close() // the server is down: so is the connection to it
			continue
		}
		if !f.track(in, out) {
			_, _ = in.Close(), out.Close()
			return
		}
		f.wg.Add(2)
		go f.pipe(out, in)
		go f.pipe(in, out)
	}
}

// track records a connection pair unless the forwarder was closed meanwhile.
func (f *forwarder) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

// pipe copies src to dst until either ends, then closes both: each side sees the other's
// end as it would across a direct connection (a FIN, or a reset if it still sends).
func (f *forwarder) pipe(dst, src net.Conn) {
	defer f.wg.Done()
	_, _ = io.Copy(dst, src)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range []net.Conn{dst, src} {
		_ = c.Close()
		delete(f.conns, c)
	}
}

// close stops accepting, cuts every connection and waits for the copies to end.
func (f *forwarder) close() {
	f.mu.Lock()
	f.closed = true
	_ = f.ln.Close()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
