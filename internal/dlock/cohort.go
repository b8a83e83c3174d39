package dlock

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"
)

// Lock cohorting (ClientOptions.Cohort; Dice, Marathe and Shavit, "Lock Cohorting", PPoPP
// 2012). A Release that finds a goroutine of the same Client queued for the key hands the
// lock over in one Redis call (handoff.lua: the key takes the waiter's token and a fresh
// ttl, and the waiter's fence is minted) instead of a release and an acquire, and wakes no
// other Client. The waiter finds the grant when it gets the key's turn in the local queue
// and holds the lock without calling Redis. At most Cohort handoffs follow each other; then
// the lock is released to every Client.
//
// What does not change: every holder has its own token, a fence minted in Redis that is
// larger than every earlier one, a ttl counted from a call that proved the key held, and
// its own watchdog. A Release whose key no longer holds its token answers ErrNotHeld, as
// the compare-and-delete would, and hands nothing over. A handoff call retried by go-redis
// after its reply was lost finds the waiter's token in the key and answers the fence minted
// then, so the waiter still gets the lock.

// grantGrace is how long a grant waits for the goroutine it was made for. A grant left
// (its waiter gave up between the Release's look at the queue and the handoff) is released
// in Redis then, so the key is not kept from other Clients for a whole ttl.
const grantGrace = 100 * time.Millisecond

// grant is a lock handed over by a Release, waiting for the next local holder of the key.
type grant struct {
	token  string
	fence  int64
	sent   time.Time // when handoff.lua was sent: the ttl counts from there
	ttl    time.Duration
	streak int // handoffs in a row that led to it, this one included
	timer  *time.Timer
}

// mayHandOff reports whether l's Release should hand the lock over: cohorting is on, l is
// a plain lock on one Redis that still has its key's turn, the streak is not at its bound,
// and a goroutine of this Client waits for the key.
func (c *Client) mayHandOff(l *Lock) bool {
	return c.cohort > 0 && c.rl == nil && !l.r.direct() && l.holdsTurn.Load() &&
		l.streak < c.cohort && c.queue.Waiters(l.r.key) > 0
}

// handOff runs handoff.lua for l and leaves the grant for the next local holder. It answers
// as releaseCall does: 1 when handed over, 0 when the key did not hold l's token.
func (c *Client) handOff(ctx context.Context, l *Lock) (int64, error) {
	next := *l.r
	next.token = rand.Text()
	sent := time.Now()
	res, err := handoffScript.Run(ctx, c.rdb, l.r.keys,
		l.r.token, next.token, l.r.ttl.Milliseconds(), fenceKeyTTLArg).Result()
	if err != nil {
		// The script may have run and only its reply been lost: the key holds either token.
		c.goBackground(func() { c.cleanup(l.r) })
		c.goBackground(func() { c.cleanup(&next) })
		return 0, err
	}
	fence, ok := res.(int64)
	switch {
	case ok && fence == 0:
		return 0, nil // not held
	case !ok || fence < 0:
		c.goBackground(func() { c.cleanup(&next) })
		return 0, fmt.Errorf("bad fence %v", res)
	}
	g := &grant{token: next.token, fence: fence, sent: sent, ttl: l.r.ttl, streak: l.streak + 1}
	c.grantMu.Lock()
	old := c.grants[l.r.key]
	c.grants[l.r.key] = g
	c.grantMu.Unlock()
	if old != nil { // cannot happen: the key's turn holder takes its grant first
		c.dropGrant(l.r, old)
	}
	g.timer = time.AfterFunc(grantGrace, func() {
		c.grantMu.Lock()
		left := c.grants[l.r.key] == g
		if left {
			delete(c.grants, l.r.key)
		}
		c.grantMu.Unlock()
		if left {
			c.dropGrant(l.r, g)
		}
	})
	return 1, nil
}

// fromGrant takes the grant left for r's key, if any, and returns the lock it makes for r,
// or nil: no grant, or one r cannot take (another ttl, or a token of the caller's own),
// which is released in Redis.
func (c *Client) fromGrant(r *request) *Lock {
	if c.cohort == 0 { // no grants are made: spare every Obtain the map's lock
		return nil
	}
	c.grantMu.Lock()
	g := c.grants[r.key]
	delete(c.grants, r.key)
	c.grantMu.Unlock()
	if g == nil {
		return nil
	}
	g.timer.Stop()
	if r.ownToken || g.ttl != r.ttl {
		c.dropGrant(r, g)
		return nil
	}
	r.token = g.token
	l := newLock(c, r, g.fence, g.sent)
	l.streak = g.streak
	return l
}

// dropGrant releases g's lock in Redis, in the background (waking the other Clients).
func (c *Client) dropGrant(r *request, g *grant) {
	dropped := *r
	dropped.token = g.token
	c.goBackground(func() { c.cleanup(&dropped) })
}

// dropGrants releases every grant not taken yet; Close calls it.
func (c *Client) dropGrants() {
	c.grantMu.Lock()
	grants := c.grants
	c.grants = map[string]*grant{}
	c.grantMu.Unlock()
	for key, g := range grants {
		g.timer.Stop()
		r := &request{key: key, token: g.token}
		r.setKeys()
		c.cleanup(r)
	}
}
