package zklock

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

var (
	// ErrNotObtained means the lock was held by others for the whole wait.
	ErrNotObtained = errors.New("zklock: not obtained")
	// ErrUnavailable means ZooKeeper did not answer, or could not serve (no session, no quorum).
	ErrUnavailable = errors.New("zklock: zookeeper unavailable")
	// ErrLost means the lock's session was suspended or expired while the lock was held.
	ErrLost = errors.New("zklock: lock lost")
	// ErrClosed means the Client is closed.
	ErrClosed = errors.New("zklock: client closed")
)

// cleanupTimeout bounds a release, and each try at removing a node left behind (see forget).
const cleanupTimeout = 2 * time.Second

// forgetTimeout is how long a node left behind is tried to be removed, while its session
// lives, before the session is closed (its nodes go with it).
const forgetTimeout = 30 * time.Second

// Observer receives lock events for metrics: etcdlock.Observer's methods, so one type serves
// both. Implementations must be concurrency-safe and non-blocking.
type Observer interface {
	Obtained(key string, wait time.Duration)
	NotObtained(key string, wait time.Duration, err error)
	Contended(key string) // the lock was granted after a wait for an earlier holder
	Lost(key string, cause error)
	Released(key string, held time.Duration, err error)
}

type nopObserver struct{}

func (nopObserver) Obtained(string, time.Duration)           {}
func (nopObserver) NotObtained(string, time.Duration, error) {}
func (nopObserver) Contended(string)                         {}
func (nopObserver) Lost(string, error)                       {}
func (nopObserver) Released(string, time.Duration, error)    {}

// Options configures a Client. The zero value is ready.
type Options struct {
	// Observer receives lock events. Default: none.
	Observer Observer
	// SessionTimeout is the timeout of the one session every lock is held in. Default: each
	// Obtain's ttl, one session per distinct ttl. ZooKeeper grants a timeout between its
	// minSessionTimeout and maxSessionTimeout (2 and 20 ticks unless set: 4 s to 40 s with
	// its default tick).
	SessionTimeout time.Duration
	// Root is the node under which the locks' nodes live. Default: /seckill/locks.
	Root string
}

// Client takes locks in the ZooKeeper ensemble at servers. It is safe for concurrent use.
type Client struct {
	servers []string
	opts    Options
	obs     Observer

	mu       sync.Mutex
	sessions map[time.Duration]*session
	closed   bool
	done     chan struct{} // closed by Close
}

// New returns a Client of the ensemble at servers (host:port each). It connects on the first
// Obtain or Ping. Close it when done.
func New(servers []string, opts Options) *Client {
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.Root == "" {
		opts.Root = "/seckill/locks"
	}
	opts.Root = "/" + strings.Trim(opts.Root, "/")
	return &Client{servers: servers, opts: opts, obs: opts.Observer,
		sessions: map[time.Duration]*session{}, done: make(chan struct{})}
}

// Close ends the Client's sessions: ZooKeeper deletes their nodes at once, and locks still
// held are lost.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sessions := c.sessions
	c.sessions = nil
	close(c.done)
	c.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
	return nil
}

// Ping reports whether ZooKeeper serves a read to one of the Client's sessions (a new one of
// 4 s if it has none): ErrUnavailable, wrapped with the reason, if not within ctx.
func (c *Client) Ping(ctx context.Context) error {
	s, err := c.session(4 * time.Second)
	if err != nil {
		return err
	}
	if _, err := s.await(ctx); err != nil {
		return err
	}
	if _, err := call(ctx, func() (bool, error) { ok, _, err := s.conn.Exists("/"); return ok, err }); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// session returns the session for locks of ttl, connecting one if there is none.
func (c *Client) session(ttl time.Duration) (*session, error) {
	if c.opts.SessionTimeout > 0 {
		ttl = c.opts.SessionTimeout
	}
	ttl = ttl.Round(time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if s := c.sessions[ttl]; s != nil {
		return s, nil
	}
	s, err := newSession(c.servers, ttl, c.obs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	c.sessions[ttl] = s
	return s, nil
}

// parent is the node under which key's claims live.
func (c *Client) parent(key string) string { return c.opts.Root + "/" + url.PathEscape(key) }

// call runs fn, a request on a session's connection, which cannot be cancelled: if ctx ends
// first, call returns ErrUnavailable wrapping ctx's cause, and fn's result is dropped.
func call[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() { v, err := fn(); ch <- result{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("no answer from zookeeper: %w", context.Cause(ctx))
	}
}

// isConnErr reports whether err leaves a request's outcome unknown: the connection was lost
// before its answer.
func isConnErr(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing)
}

// retire closes session s, under which a node was left that ZooKeeper would not remove: its
// nodes go, its locks are lost, and the next Obtain connects a new one.
func (c *Client) retire(s *session) {
	c.mu.Lock()
	for ttl, cur := range c.sessions {
		if cur == s {
			delete(c.sessions, ttl)
		}
	}
	c.mu.Unlock()
	s.close()
}
