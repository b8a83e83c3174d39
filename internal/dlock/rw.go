package dlock

import (
	"context"
	"errors"
	"time"
)

// The modes of a read-write request (request.rw).
const (
	rwRead  = 1
	rwWrite = 2
)

// Suffixes of a read-write key's readers (a hash of reader tokens) and of its waiting writer.
const (
	readersSuffix = ":readers"
	writerSuffix  = ":wwait"
)

// ErrRWRedlock is returned by RWMutex's methods on a Redlock Client: they need one Redis or
// Redis Cluster.
var ErrRWRedlock = errors.New("dlock: read-write locks need a single Redis or Redis Cluster, not Redlock")

// RWMutex is a read-write lock on one key: many readers at once, or one writer. Get one
// with Client.RW; it holds nothing itself and is cheap to make.
type RWMutex struct {
	c   *Client
	key string
}

// RW returns the read-write lock of key. A key used as a read-write lock must only be taken
// through RW: Obtain on the same key sees the writer only.
func (c *Client) RW(key string) *RWMutex { return &RWMutex{c: c, key: key} }

// RLock takes the key for reading, waiting up to opt.Wait while a writer holds it or waits for it;
// each reader is a Lock of its own. It returns Obtain's errors, and ErrRWRedlock on a Redlock
// Client; Options.Fair is refused.
func (m *RWMutex) RLock(ctx context.Context, ttl time.Duration, opt *Options) (*Lock, error) {
	return m.c.obtainRW(ctx, m.key, ttl, opt, rwRead)
}

// Lock takes the key for writing, waiting up to opt.Wait while a writer or readers hold it; a
// waiting writer claims the next turn, so new readers wait behind it. It returns Obtain's errors,
// and ErrRWRedlock on a Redlock Client.
func (m *RWMutex) Lock(ctx context.Context, ttl time.Duration, opt *Options) (*Lock, error) {
	return m.c.obtainRW(ctx, m.key, ttl, opt, rwWrite)
}

func (c *Client) obtainRW(ctx context.Context, key string, ttl time.Duration, opt *Options, mode int) (*Lock, error) {
	switch {
	case c.rl != nil:
		return nil, ErrRWRedlock
	case opt != nil && opt.Fair:
		return nil, errors.New("dlock: a read-write lock is not fair")
	}
	return c.obtainWith(ctx, key, ttl, opt, func(r *request) {
		r.rw = mode
		r.readersKey, r.writerKey = derive(key, readersSuffix), derive(key, writerSuffix)
		r.queueTimeout = r.placeTimeout()
	}, c.obtainDirect)
}

// tryRW is try for a read-write lock.
func (c *Client) tryRW(ctx context.Context, r *request) (any, error) {
	mode := "r"
	if r.rw == rwWrite {
		mode = "w"
	}
	keys := []string{r.key, r.fenceKey(), r.readersKey, r.writerKey}
	return rwAcquireScript.Run(ctx, c.rdb, keys, r.token, r.ttl.Milliseconds(), fenceKeyTTL.Milliseconds(),
		mode, r.queueTimeout.Milliseconds()).Result()
}

// readerCall runs a reader's release ("release", with the channel), refresh ("refresh",
// with the ttl in ms) or remaining ttl ("pttl").
func (c *Client) readerCall(ctx context.Context, r *request, op string, arg any) (int64, error) {
	keys := []string{r.readersKey, releasedKey(r.key, r.token)}
	return rwReaderScript.Run(ctx, c.rdb, keys, r.token, op, arg, releaseMarkTTLArg).Int64()
}

// leaveRW drops the claim on the next turn of a waiting writer that gave up. (A reader whose
// reply was lost leaves through cleanup.)
func (c *Client) leaveRW(r *request) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = rwLeaveScript.Run(ctx, c.rdb, []string{r.writerKey}, r.token).Err()
}
