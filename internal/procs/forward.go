package procs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Forward starts a forwarder to target and returns the address processes inside dial instead.
func (n *Netns) Forward(target string) (string, error) {
	return n.forward(target, net.ListenConfig{KeepAlive: -1}, 0)
}

// ForwardProbing is Forward that ends a connection to target once p finds the process inside
// silent, as a server's keepalives would.
func (n *Netns) ForwardProbing(target string, p Probe) (string, error) {
	p.KeepAlive.Enable = true
	return n.forward(target, net.ListenConfig{KeepAliveConfig: p.KeepAlive}, p.UserTimeout)
}

// Probe is how a probing forwarder (ForwardProbing) finds that a process stopped answering.
type Probe struct {
	// KeepAlive is the TCP keepalive of each connection.
	KeepAlive net.KeepAliveConfig
	// UserTimeout is TCP_USER_TIMEOUT; 0: the kernel's, about 15 minutes.
	UserTimeout time.Duration
}

// forward starts a forwarder whose listener is made by lc, setting TCP_USER_TIMEOUT to
// userTimeout on each connection it accepts when not 0.
func (n *Netns) forward(target string, lc net.ListenConfig, userTimeout time.Duration) (string, error) {
	ln, err := lc.Listen(context.Background(), "tcp", net.JoinHostPort(n.Host, "0"))
	if err != nil {
		return "", fmt.Errorf("forward %s from %s: %w", target, n.Name, err)
	}
	f := &forwarder{ln: ln, target: target, userTimeout: userTimeout, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.accept()
	n.mu.Lock()
	n.fwds = append(n.fwds, f)
	n.mu.Unlock()
	return ln.Addr().String(), nil
}

// forwarder copies the connections to ln both ways to target.
type forwarder struct {
	ln          net.Listener
	target      string
	userTimeout time.Duration // TCP_USER_TIMEOUT of the accepted connections; 0: unset
	wg          sync.WaitGroup

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
		if err := setUserTimeout(in, f.userTimeout); err != nil {
			_ = in.Close() // it would not end as its server's would
			continue
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

// setUserTimeout sets TCP_USER_TIMEOUT on c to d, when d is not 0.
func setUserTimeout(c net.Conn, d time.Duration) error {
	tc, ok := c.(*net.TCPConn)
	if d == 0 || !ok {
		return nil
	}
	sc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = sc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
	})
	return errors.Join(err, serr)
}
