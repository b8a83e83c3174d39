package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/seckill/seckill/internal/keyed"
)

var (
	// ErrNotObtained means the lock was held by others for the whole wait.
	ErrNotObtained = errors.New("etcdlock: not obtained")
	// ErrUnavailable means etcd did not answer, or could not serve (no quorum, no leader).
	ErrUnavailable = errors.New("etcdlock: etcd unavailable")
	// ErrLost means the lock's lease ended while the lock was held.
	ErrLost = errors.New("etcdlock: lock lost")
	// ErrClosed means the Client is closed.
	ErrClosed = errors.New("etcdlock: client closed")
)

// cleanupTimeout bounds a release, and each try at removing a key left behind (see forget).
const cleanupTimeout = 2 * time.Second

// forgetNowTimeout bounds the removal of a failed Obtain's key before Obtain returns; past it,
// the removal goes on in the background (see forgetSoon).
const forgetNowTimeout = 250 * time.Millisecond

// forgetTimeout is how long a key left behind is tried to be removed, while its session lives,
// before the session is retired (see forget).
const forgetTimeout = 30 * time.Second

// probeTimeout bounds the read that tells, after a wait ran out, whether etcd could serve.
const probeTimeout = 300 * time.Millisecond

// Observer receives lock events, for metrics. Implementations must be safe for concurrent
// use and must not block. Its methods are those of dlock.Observer but Renewed (etcd's
// keep-alive renews a process's lease, not a lock), so one metrics type serves both.
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

// Client takes locks in etcd through cli. Its goroutines share one session (one lease) per
// lease length, and queue in the process for a key that another of them holds or waits for
// (two waiters of one session cannot share a key). It is safe for concurrent use.
type Client struct {
	cli *clientv3.Client
	obs Observer

	ctx    context.Context // the sessions' keep-alives; cancelled by Close
	cancel context.CancelFunc

	grant    chan struct{} // held while a session is granted
	mu       sync.Mutex
	sessions map[int64]*concurrency.Session // by lease seconds
	queues   keyed.Mutexes                  // a key's place in the process: one claim per key and session
	closed   bool
}

// New returns a Client over cli, reporting to obs (nil: none). Close it when done; cli stays
// open.
func New(cli *clientv3.Client, obs Observer) *Client {
	if obs == nil {
		obs = nopObserver{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{cli: cli, obs: obs, ctx: ctx, cancel: cancel, grant: make(chan struct{}, 1),
		sessions: map[int64]*concurrency.Session{}}
}

// Close ends the Client's sessions, revoking their leases: locks still held are lost.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sessions := c.sessions
	c.sessions = nil
	c.mu.Unlock()
	var errs []error
	for _, s := range sessions {
		errs = append(errs, s.Close())
	}
	c.cancel()
	return errors.Join(errs...)
}

// Ping reports whether etcd serves a linearizable read (a majority and a leader); if not,
// ErrUnavailable wrapped with why.
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.cli.Get(ctx, "seckill/ping", clientv3.WithCountOnly()); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// session returns the live session for leases of ttl, granting one if there is none (a
// session whose lease ended is replaced). The grant is bounded by ctx.
func (c *Client) session(ctx context.Context, ttl time.Duration) (*concurrency.Session, error) {
	secs := int64((ttl + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	if s, err := c.live(secs); s != nil || err != nil {
		return s, err
	}
	select {
	case c.grant <- struct{}{}:
		defer func() { <-c.grant }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: no session within the wait: %w", ErrUnavailable, context.Cause(ctx))
	}
	if s, err := c.live(secs); s != nil || err != nil { // granted meanwhile
		return s, err
	}
	resp, err := c.cli.Grant(ctx, secs)
	if err != nil {
		return nil, fmt.Errorf("%w: grant a lease: %w", ErrUnavailable, err)
	}
	s, err := concurrency.NewSession(c.cli, concurrency.WithLease(resp.ID),
		concurrency.WithTTL(int(secs)), concurrency.WithContext(c.ctx))
	if err != nil {
		return nil, fmt.Errorf("%w: keep a lease alive: %w", ErrUnavailable, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		go s.Close()
		return nil, ErrClosed
	}
	c.sessions[secs] = s
	return s, nil
}

// live returns the live session for leases of secs seconds, or nil.
func (c *Client) live(secs int64) (*concurrency.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if s := c.sessions[secs]; s != nil && !ended(s) {
		return s, nil
	}
	return nil, nil
}

// retire stops using session s, whose lease ended, or under which a key was left behind that
// etcd would not remove (see forget): its keep-alive stops and its lease is revoked, or
// expires, so its keys go and no one waits behind them for ever. Locks held under s are lost.
func (c *Client) retire(s *concurrency.Session) {
	c.mu.Lock()
	for secs, cur := range c.sessions {
		if cur == s {
			delete(c.sessions, secs)
		}
	}
	c.mu.Unlock()
	go s.Close() // bounded by the lease's TTL
}

func ended(s *concurrency.Session) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// errQueued is a try (no wait) that found another goroutine of the process on the key.
var errQueued = errors.New("another goroutine of this process has or awaits it")

// enter takes key's place in the process, waiting until ctx ends, or only tries (block
// false): errQueued if another goroutine of the process has it or waits for it.
func (c *Client) enter(ctx context.Context, key string, block bool) error {
	if block {
		return c.queues.Lock(ctx, key)
	}
	if !c.queues.TryLock(key) {
		return errQueued
	}
	return nil
}
