package dlock

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"
)

// request is one Obtain call with its options resolved. It never changes
// after newRequest, and a Lock keeps it.
type request struct {
	key, token string

	// keys are the keys of acquire.lua and handoff.lua, in their order: the lock key, the
	// release channel's name (the mark that someone waits) and the fence key; release.lua
	// takes the first two. channel and fenceKey read them.
	keys []string

	ttl, wait, minBackoff, maxBackoff, maxHold, drift time.Duration

	obs Observer

	// A fair request (ObtainFair) waits in its key's queue, kept for queueTimeout between
	// its calls.
	fair                               bool
	queueKey, timeoutsKey, arrivalsKey string
	queueTimeout                       time.Duration

	// A read-write request (RWMutex) reads (rwRead) or writes (rwWrite); a waiting writer's
	// claim on the next turn lasts queueTimeout between its calls.
	rw                    int
	readersKey, writerKey string

	ownToken bool // the caller chose the token (Options.Token): a handed-over lock would change it
}

// timed reports whether r's Observer is told how long things took: not when it is the
// NopObserver, which spares an Obtain and a Release reading the clock.
func (r *request) timed() bool {
	_, nop := r.obs.(NopObserver)
	return !nop
}

// direct reports whether r's waiters skip the Client's local queue and are woken one by one
// (see notifier.joinFair): fair and read-write requests.
func (r *request) direct() bool { return r.fair || r.rw != 0 }

// newRequest validates the arguments of Obtain and fills in the defaults.
func (c *Client) newRequest(key string, ttl time.Duration, opt *Options) (*request, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var o Options
	if opt != nil {
		o = *opt
	}
	r := &request{
		key:        key,
		token:      o.Token,
		ttl:        ttl.Truncate(time.Millisecond), // Redis counts whole ms
		wait:       max(o.Wait, 0),
		minBackoff: o.MinBackoff,
		maxBackoff: o.MaxBackoff,
		maxHold:    max(o.MaxHold, 0),
		drift:      max(o.Drift, 0),
		obs:        o.Observer,
	}
	r.setKeys()
	if r.ownToken = r.token != ""; !r.ownToken {
		r.token = rand.Text() // 26 base32 characters, 128 random bits
	}
	if r.minBackoff <= 0 {
		r.minBackoff = defaultMinBackoff
	}
	if r.maxBackoff <= 0 {
		r.maxBackoff = max(defaultMaxBackoff, r.minBackoff)
	}
	r.maxBackoff = max(r.maxBackoff, r.minBackoff)
	if r.obs == nil {
		r.obs = c.obs
	}
	if err := r.checkTTL(ttl); err != nil {
		return nil, err
	}
	return r, nil
}

// setKeys derives r's companion keys from r.key.
func (r *request) setKeys() {
	fenceKey, channel := companions(r.key)
	r.keys = []string{r.key, channel, fenceKey}
}

// channel is the key's release channel, also the key that marks a waiter.
func (r *request) channel() string { return r.keys[1] }

// fenceKey is the key where the lock's fencing tokens are minted.
func (r *request) fenceKey() string { return r.keys[2] }

// driftFor returns the safety margin for a lock or renewal of the given ttl.
func (r *request) driftFor(ttl time.Duration) time.Duration {
	if r.drift > 0 {
		return r.drift
	}
	return ttl/100 + 2*time.Millisecond
}

// checkTTL rejects a ttl that leaves no safe time after the drift margin.
func (r *request) checkTTL(ttl time.Duration) error {
	ms := ttl.Truncate(time.Millisecond)
	if d := r.driftFor(ms); ms <= d {
		return fmt.Errorf("dlock: ttl %v must exceed the drift margin %v", ttl, d)
	}
	return nil
}

// Obtain takes the lock on key for ttl (above the drift margin), waiting up to Options.Wait. It
// returns ErrNotObtained when the key stays busy (joined with ctx.Err() if ctx ended the wait),
// or Redis's error wrapped, never ErrNotObtained. Obtain is safe for concurrent use.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opt *Options) (*Lock, error) {
	if opt != nil && opt.Fair {
		return c.ObtainFair(ctx, key, ttl, opt)
	}
	return c.obtainWith(ctx, key, ttl, opt, nil, c.obtain)
}

// obtainWith runs one Obtain of any kind: a request for key, made ready by setup (if any),
// obtained by obtain, reported to the observer.
func (c *Client) obtainWith(ctx context.Context, key string, ttl time.Duration, opt *Options,
	setup func(r *request), obtain func(ctx context.Context, r *request) (*Lock, error),
) (*Lock, error) {
	r, err := c.newRequest(key, ttl, opt)
	if err != nil {
		return nil, err
	}
	var start time.Time
	if r.timed() {
		start = time.Now()
	}
	if setup != nil {
		setup(r)
	}
	if c.isClosed() {
		return nil, ErrClosed
	}
	l, err := obtain(ctx, r)
	if err != nil {
		if r.timed() {
			r.obs.NotObtained(key, time.Since(start), err)
		}
		return nil, err
	}
	if r.timed() {
		r.obs.Obtained(key, time.Since(start))
	}
	return l, nil
}

// try makes the n-th acquire call (from 0). It returns the lock when taken,
// or else the holder's remaining ttl (zero when unknown).
func (c *Client) try(ctx context.Context, r *request, n int) (*Lock, time.Duration, error) {
	if c.rl != nil {
		return c.rl.try(ctx, c, r, n)
	}
	sent := time.Now()
	var (
		res any
		err error
	)
	switch {
	case r.fair:
		res, err = c.tryFair(ctx, r)
	case r.rw != 0:
		res, err = c.tryRW(ctx, r)
	default:
		res, err = r.acquireOn(ctx, c.rdb)
	}
	if err != nil {
		// The script may have run and only its reply been lost: delete the
		// key if it holds our token, so it is not left held for a whole ttl.
		c.goBackground(func() { c.cleanup(r) })
		if ctx.Err() != nil {
			return nil, 0, notObtained(ctx)
		}
		return nil, 0, fmt.Errorf("dlock: obtain %q: %w", r.key, err)
	}
	if r.fair {
		return c.fairAnswer(r, res, sent)
	}
	fence, pttl, err := parseAcquire(res)
	switch {
	case err != nil:
		c.goBackground(func() { c.cleanup(r) })
		return nil, 0, fmt.Errorf("dlock: obtain %q: %w", r.key, err)
	case fence == 0:
		return nil, pttl, nil
	}
	return newLock(c, r, fence, sent), 0, nil
}

// cleanup deletes r's key if it holds r's token (a reader: leaves the readers).
func (c *Client) cleanup(r *request) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if r.rw == rwRead {
		_, _ = c.readerCall(ctx, r, "release", r.channel())
		return
	}
	_, _, _ = r.releaseOn(ctx, c.rdb)
}

// notObtained is the error of an Obtain whose ctx ended while waiting.
func notObtained(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("%w: %w: %w", ErrNotObtained, err, cause)
	}
	return fmt.Errorf("%w: %w", ErrNotObtained, err)
}
