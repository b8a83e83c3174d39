package dlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/keyed"
)

// Sentinel errors. Compare with errors.Is, never ==: most are returned wrapped
// or joined with the reason.
var (
	// ErrNotObtained is returned by Obtain and Do when someone else holds the key and Options.Wait
	// ran out (or was zero); when ctx ended first, the error matches ctx.Err() too. A Redis failure
	// is never ErrNotObtained.
	ErrNotObtained = errors.New("dlock: not obtained")

	// ErrNotHeld is returned by Release, Refresh and TTL when the lock is not
	// held any more: it expired, someone else holds the key now, it was
	// released already, or its watchdog reported it lost.
	ErrNotHeld = errors.New("dlock: not held")

	// ErrLost is the context.Cause of a watched context (see Lock.Watch) whose
	// lock was lost while held, and is joined into the error of Do. The cause
	// wraps ErrLost with the reason.
	ErrLost = errors.New("dlock: lock lost")

	// ErrClosed is returned by Obtain and Do after Client.Close.
	ErrClosed = errors.New("dlock: client closed")
)

const (
	defaultMinBackoff = 2 * time.Millisecond
	defaultMaxBackoff = 64 * time.Millisecond

	// fenceKeyTTL is the expiry of a key's last fence, set again by every mint (see
	// mint.lua), so that the fences of keys no longer used go away.
	fenceKeyTTL = 7 * 24 * time.Hour

	// waitMarkTTL is how long the mark that someone waits for a key lasts after
	// a failed acquire (acquire.lua): each failed try sets it again, and the
	// release that publishes takes it away. A mark that has expired only leaves
	// the waiter to its backoff.
	waitMarkTTL = time.Minute

	// releaseMarkTTL is how long the marker that a fair lock's or a reader's release leaves
	// lasts (fairrelease.lua, rwreader.lua): a retried release call, whose first reply was
	// lost, finds it and answers released instead of not held. go-redis retries a call after a
	// broken connection within its backoff (at most 1 s each by default, 3 retries), after a
	// hung one within its read timeout (3 s by default). A plain lock's release leaves none
	// (scripts.go, releaseOn).
	releaseMarkTTL = 5 * time.Second

	// cleanupTimeout bounds the releases that run after the caller's context
	// may have ended: in Do, and after a failed acquire call.
	cleanupTimeout = time.Second
)

// Options tunes one Obtain or Do. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// Wait is how long Obtain waits for a key that someone else holds, the time queued behind this
	// Client's other goroutines included. Default: 0, try once (a key another goroutine of this
	// Client holds or waits for then fails without a call to Redis).
	Wait time.Duration

	// MinBackoff and MaxBackoff bound the jittered exponential backoff between
	// attempts while waiting (see docs/dlock.md#guarantees). Defaults: 2ms and 64ms.
	MinBackoff time.Duration
	MaxBackoff time.Duration

	// MaxHold caps how long after the acquisition the watchdog keeps the lock;
	// the key expires then and the watched context's cause wraps ErrLost.
	// Default: 0, unlimited.
	MaxHold time.Duration

	// Drift is the margin taken off the ttl for Lock.Deadline, for clock drift
	// and the acquire call's delay. Default: ttl/100 + 2ms, as in Redlock.
	Drift time.Duration

	// Token is the lock's value in Redis, unique per Obtain and unguessable: a
	// shared token would let two holders in. Default: 128 random bits.
	Token string

	// Observer receives the lock's events. Default: the Client's observer
	// (see ClientOptions), else none.
	Observer Observer

	// Fair makes Obtain and Do take the key as ObtainFair does, in its
	// waiters' order across Clients. Default: false.
	Fair bool
}

// ClientOptions configures a Client. A nil *ClientOptions means defaults.
type ClientOptions struct {
	// Observer receives the events of every lock whose Options.Observer is
	// nil. Default: none.
	Observer Observer

	// Cohort is how many times in a row a Release may hand its lock to a waiter of this Client
	// (docs/dlock.md#handing-the-lock-over-in-a-process-cohorting). Default: 0, never.
	Cohort int

	// NodeTimeout bounds each acquire call to one node of a Redlock Client
	// (see NewRedlock); its release, refresh and TTL calls get four times as
	// long. A single-Redis Client ignores it. Default: min(50ms, ttl/10).
	NodeTimeout time.Duration
}

// Client obtains locks from Redis. It is safe for concurrent use; create one
// per Redis client (or Redlock node set) and share it, so that goroutines
// waiting for the same key queue locally instead of all polling Redis.
type Client struct {
	rdb    redis.UniversalClient // the single Redis; nil under Redlock
	rl     *redlock              // the Redlock nodes; nil for a single Redis
	obs    Observer
	queue  keyed.Mutexes
	turns  turns // who holds each key's turn in queue (see turn.go)
	notify *notifier
	cohort int // ClientOptions.Cohort

	grantMu sync.Mutex
	grants  map[string]*grant // locks handed over, by key, until their next holder takes them

	mu     sync.Mutex // guards closed and bg.Add
	closed bool
	bg     sync.WaitGroup // background cleanups after failed acquire calls
}

// New returns a Client that takes locks in rdb, which may be a single-node,
// sentinel (failover) or cluster client: one Redis, from the lock's point of
// view. A nil opt means the defaults. For independent masters, see NewRedlock.
func New(rdb redis.UniversalClient, opt *ClientOptions) *Client {
	c := &Client{rdb: rdb, obs: NopObserver{}, notify: newNotifier(rdb), grants: map[string]*grant{}}
	c.setOptions(opt)
	return c
}

func (c *Client) setOptions(opt *ClientOptions) {
	if opt != nil && opt.Observer != nil {
		c.obs = opt.Observer
	}
	if opt != nil {
		c.cohort = max(opt.Cohort, 0)
	}
}

// Close stops the Client's background work (its release subscription and pending cleanups),
// after which Obtain and Do return ErrClosed; a second Close does nothing. It releases no lock
// and does not close the Redis client.
func (c *Client) Close() error {
	c.dropGrants()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.notify.close()
	c.bg.Wait()
	return nil
}

// goBackground runs f in a goroutine that Close waits for, unless the Client
// is closed already.
func (c *Client) goBackground(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		f()
	}()
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Do obtains the lock, runs fn with its watched context (see Lock.Watch), and releases it,
// also on panic or a cancelled ctx. It returns Obtain's error, or fn's joined with ErrLost if the lock was lost
// meanwhile; a failed release goes to the Observer. Do is safe for concurrent use.
func (c *Client) Do(ctx context.Context, key string, ttl time.Duration, opt *Options,
	fn func(ctx context.Context, l *Lock) error,
) (err error) {
	l, err := c.Obtain(ctx, key, ttl, opt)
	if err != nil {
		return err
	}
	return runWatched(ctx, l.Watch(ctx), l.Release, func(wctx context.Context) error { return fn(wctx, l) })
}

// runWatched runs fn on wctx, the watched context of a held lock, then releases the lock with
// release on a fresh context (context.WithoutCancel(ctx), bounded to cleanupTimeout), also
// when fn panics (the panic then goes on unchanged). Its error is fn's, joined with a cause
// wrapping ErrLost if the lock was lost while fn ran. Do and DoMulti run on it.
func runWatched(ctx, wctx context.Context, release func(context.Context) error, fn func(context.Context) error) (err error) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if lost := lostCause(wctx, release(rctx)); lost != nil {
			err = errors.Join(err, lost)
		}
	}()
	return fn(wctx)
}

// lostCause returns why a watched lock counts as lost after its release
// returned relErr, or nil if it was held throughout.
func lostCause(wctx context.Context, relErr error) error {
	if cause := context.Cause(wctx); errors.Is(cause, ErrLost) {
		return cause
	}
	if errors.Is(relErr, ErrNotHeld) && !errors.Is(relErr, errReleased) { // fn may have released it
		return fmt.Errorf("%w: not held at release", ErrLost)
	}
	return nil
}
