//go:build linux

package chaos_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// keyEvents is the stream of Redis keyspace notifications about one key, as the test
// received them: set, expire, del, expired. The Redis must be started with
// notify-keyspace-events including K, g, $ and x (see keyEventsConfig); the shared Redis is
// not reconfigured, so a test that watches keys runs on a Redis of its own.
//
// A lock's acquire is a set on a key that was free (after a del or an expired); a cohort's
// handoff (handoff.lua) is a set on a key that still held the previous holder's token, with
// no del in between; a renewal is an expire, and so is the PX of every set.
type keyEvents struct {
	mu  sync.Mutex
	evs []keyEvent
}

type keyEvent struct {
	op string
	at time.Time // when the test received it
}

// keyEventsConfig are redis-server arguments that publish the notifications keyEvents reads.
var keyEventsConfig = []string{"--notify-keyspace-events", "Kg$x"}

// watchKey subscribes to the notifications about key on rdb's database 0 and records them
// until the test ends.
func watchKey(t *testing.T, rdb *redis.Client, key string) *keyEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sub := rdb.Subscribe(ctx, "__keyspace@0__:"+key)
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		cancel()
		t.Fatalf("subscribe to the notifications of %s: %v", key, err)
	}
	k := &keyEvents{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range sub.Channel() {
			k.mu.Lock()
			k.evs = append(k.evs, keyEvent{op: m.Payload, at: time.Now()})
			k.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = sub.Close()
		<-done
	})
	return k
}

// ops returns the operations received so far, renewals (expire) left out, with when each
// was received.
func (k *keyEvents) ops() []keyEvent {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []keyEvent
	for _, e := range k.evs {
		if e.op != "expire" {
			out = append(out, e)
		}
	}
	return out
}

// handoffs counts the sets that followed a set with no del or expiry in between.
func (k *keyEvents) handoffs() int {
	n := 0
	ops := k.ops()
	for i := 1; i < len(ops); i++ {
		if ops[i].op == "set" && ops[i-1].op == "set" {
			n++
		}
	}
	return n
}

// streak is how many handoffs in a row led to the key's current holder: 0 when the last
// operation was an acquire (a set after a del or an expiry), or the key is free.
func (k *keyEvents) streak() int {
	ops := k.ops()
	n := 0
	for i := len(ops) - 1; i > 0 && ops[i].op == "set" && ops[i-1].op == "set"; i-- {
		n++
	}
	return n
}

// diedHolding reports whether the first expiry received after since ended a hold that began
// with a handoff: the victim of a fault at since held a handed-over lock, and nobody
// released it. It returns when that expiry was received, and the handoffs in a row before it.
func (k *keyEvents) diedHolding(since time.Time) (expired time.Time, streak int, ok bool) {
	ops := k.ops()
	for i, e := range ops {
		if e.op != "expired" || e.at.Before(since) {
			continue
		}
		for j := i - 1; j > 0 && ops[j].op == "set" && ops[j-1].op == "set"; j-- {
			streak++
		}
		return e.at, streak, streak > 0
	}
	return time.Time{}, 0, false
}

// String lists the operations, renewals left out, e.g. "set set del set".
func (k *keyEvents) String() string {
	var b strings.Builder
	for i, e := range k.ops() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.op)
	}
	return b.String()
}
