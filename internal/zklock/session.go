package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
		zk.WithEventCallback(s.event))
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
