package zklock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// session is one ZooKeeper session: a connection that the client library keeps alive with
// pings, reconnects (to another member if need be) within the timeout, and replaces with a
// new session once the ensemble expired the old one. It tells the locks held in it of their
// loss at the first disconnection, and of the expiry.
type session struct {
	conn *zk.Conn
	ttl  time.Duration
	obs  Observer

	mu      sync.Mutex
	id      int64 // the session's id while it is connected; 0 while it is not
	changed chan struct{}
	held    map[*Lock]struct{}
	early   bool // connected before conn was set
}

func newSession(servers []string, ttl time.Duration, obs Observer) (*session, error) {
	s := &session{ttl: ttl, obs: obs, changed: make(chan struct{}), held: map[*Lock]struct{}{}}
	conn, _, err := zk.Connect(servers, ttl, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false),
		zk.WithEventCallback(s.event), zk.WithDialer(cappedDialer(ttl)))
	if err != nil {
		return nil, fmt.Errorf("connect to %v: %w", servers, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = conn
	if s.early { // the session was had before Connect returned
		s.id = conn.SessionID()
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return s, nil
}

// cappedDialer dials connections whose handshake waits at most limit for the member: the
// client library waits ten times two thirds of the session, so a new session whose first pick
// was a frozen member (SIGSTOP: the kernel still accepts the connection) waited 13 s for a
// 2 s session before it tried another (TestEnsembleFaults). Once the member has answered, the
// library's own deadlines hold.
func cappedDialer(limit time.Duration) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return &handshakeConn{Conn: c, limit: limit}, nil
	}
}

// handshakeConn is a connection whose deadlines are at most limit away until it first reads.
type handshakeConn struct {
	net.Conn
	limit    time.Duration
	answered atomic.Bool
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.answered.Store(true)
	}
	return n, err
}

func (c *handshakeConn) cap(t time.Time) time.Time {
	if lim := time.Now().Add(c.limit); !c.answered.Load() && !t.IsZero() && t.After(lim) {
		return lim
	}
	return t
}

func (c *handshakeConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.cap(t)) }
func (c *handshakeConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.cap(t)) }

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {} // its reconnections would flood the log during an outage

// event is the client library's callback for the connection's state; it must not block.
func (s *session) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	var cause error
	s.mu.Lock()
	switch ev.State {
	case zk.StateHasSession:
		if s.conn == nil {
			s.early = true
			s.mu.Unlock()
			return
		}
		s.id = s.conn.SessionID()
	case zk.StateDisconnected:
		if s.id != 0 {
			cause = fmt.Errorf("%w: suspended: the connection to zookeeper (%s) was lost; the session may live on or be expired", ErrLost, ev.Server)
		}
		s.id = 0
	case zk.StateExpired:
		cause = fmt.Errorf("%w: the zookeeper session expired", ErrLost)
		s.id = 0
	default:
		s.mu.Unlock()
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
	held := s.held
	if cause != nil {
		s.held = map[*Lock]struct{}{}
	}
	s.mu.Unlock()
	if cause != nil {
		for l := range held {
			l.loseTo(cause)
		}
	}
}

// await waits until the session is connected and returns its id; ErrUnavailable if ctx ends
// first.
func (s *session) await(ctx context.Context) (int64, error) {
	for {
		s.mu.Lock()
		id, changed := s.id, s.changed
		s.mu.Unlock()
		if id != 0 {
			return id, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, fmt.Errorf("%w: no zookeeper session: %w", ErrUnavailable, context.Cause(ctx))
		}
	}
}

// connected reports whether the session is connected with id.
func (s *session) connected(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id == id && id != 0
}

// hold registers l, whose node belongs to session id, to be told of the session's loss; it
// fails if the session is not connected with id any more.
func (s *session) hold(l *Lock, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id != id || id == 0 {
		return errors.New("the session was suspended or replaced before the grant")
	}
	s.held[l] = struct{}{}
	return nil
}

// unhold stops telling l of the session's loss.
func (s *session) unhold(l *Lock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, l)
}

// close ends the session: its nodes are deleted at once, and its locks lost.
func (s *session) close() { s.conn.Close() }
