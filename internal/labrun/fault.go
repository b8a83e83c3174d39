package labrun

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// holder finds the API process that holds the lock at key, as an operator reading Redis
// would: every lab lock value starts with its holder's process id (lab.Owner, lab.OwnerOf). want says
// which state of the key to wait for, by its PTTL. It polls every 2 ms until ctx ends.
func holder(ctx context.Context, rdb redis.UniversalClient, key string, apis []*servers.API,
	want func(pttl time.Duration) bool,
) (*servers.API, error) {
	for {
		if a := holderNow(ctx, rdb, key, apis, want); a != nil {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no holder of %s found: %w", key, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// holderNow is the process of apis that holds key in a state want accepts, or nil.
func holderNow(ctx context.Context, rdb redis.UniversalClient, key string, apis []*servers.API,
	want func(pttl time.Duration) bool,
) *servers.API {
	var get *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get, ttl = p.Get(ctx, key), p.PTTL(ctx, key)
		return nil
	})
	if err != nil || !want(ttl.Val()) {
		return nil
	}
	pid, ok := lab.OwnerOf(get.Val())
	for _, a := range apis {
		if ok && a.Pid() == pid {
			return a
		}
	}
	return nil
}

// keyState describes key for a stalled cell: whether it exists, its expiry and its value.
func keyState(ctx context.Context, rdb redis.UniversalClient, key string) string {
	v, err := rdb.Get(ctx, key).Result()
	if err != nil {
		return "no lock key left"
	}
	ttl := rdb.PTTL(ctx, key).Val()
	if ttl == -1 {
		return fmt.Sprintf("%s = %q, no expiry", key, v)
	}
	return fmt.Sprintf("%s = %q, expires in %v", key, v, ttl)
}

// injure does the scenario's fault to the process that holds the product's lock (or, for
// the locks that have no key, to the first process), once trigger orders are in, and says
// what it did. It runs on the runner's goroutine: the process calls may end it (Fatal).
func (r *run) injure(ctx context.Context, s Scenario, lock, key string, c *crowd) string {
	for c.sold.Load() < int64(s.Trigger) {
		select {
		case <-ctx.Done():
			return "no fault: the sale ended before " + strconv.Itoa(s.Trigger) + " orders"
		case <-time.After(5 * time.Millisecond):
		}
	}
	target, holding := r.apis[0], "mid-sale (this lock has no key: the first process)"
	if lock == "none" || lock == "mutex" {
		target.Signal(syscall.SIGSTOP)
	} else {
		a, err := r.stopHolder(ctx, s, lock, key)
		if err != nil {
			return "no fault: " + err.Error()
		}
		target, holding = a, "holding "+key
	}
	// The target is stopped now: the fault lands on the state it was stopped in.
	pid := target.Pid()
	if s.Fault == "kill" {
		target.Kill()
		return fmt.Sprintf("SIGKILL to %s (pid %d), %s", target.Name, pid, holding)
	}
	time.Sleep(s.Pause)
	target.Signal(syscall.SIGCONT)
	return fmt.Sprintf("SIGSTOP to %s (pid %d), %s, for %v, then SIGCONT", target.Name, pid, holding, s.Pause)
}

// stopHolder stops (SIGSTOP) the process that holds key in the state the scenario needs, and
// returns it. Between reading the key and the signal the lock may have changed hands, so it
// reads the key again once the process is stopped (a stopped holder cannot release) and, if
// the process no longer holds it, continues the process and looks again, for up to 5 s.
func (r *run) stopHolder(ctx context.Context, s Scenario, lock, key string) (*servers.API, error) {
	// go-redis reports PTTL's -2 (no key) and -1 (no expiry) as those many nanoseconds.
	want := func(pttl time.Duration) bool { return pttl != -2 }
	switch {
	case lock == "setnx-expire" && s.Fault == "kill":
		want = func(pttl time.Duration) bool { return pttl == -1 } // between SETNX and EXPIRE
	case lock == "setnx-expire":
		want = func(pttl time.Duration) bool { return pttl > 0 } // after EXPIRE
	}
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		a, err := holder(hctx, r.rdb, key, r.apis, want)
		if err != nil {
			return nil, err
		}
		a.Signal(syscall.SIGSTOP)
		if holderNow(hctx, r.rdb, key, []*servers.API{a}, want) == a {
			return a, nil
		}
		a.Signal(syscall.SIGCONT)
	}
}
