package labrun

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/procs"
)

// holder finds the API process that holds the lock at key, as an operator reading Redis
// would: every lab lock value starts with its holder's process id (internal/lab's Owner; ownerOf). want says
// which state of the key to wait for, by its PTTL. It polls every 2 ms until ctx ends.
func holder(ctx context.Context, rdb redis.UniversalClient, key string, apis []*procs.API,
	want func(pttl time.Duration) bool,
) (*procs.API, error) {
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
func holderNow(ctx context.Context, rdb redis.UniversalClient, key string, apis []*procs.API,
	want func(pttl time.Duration) bool,
) *procs.API {
	var get *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get, ttl = p.Get(ctx, key), p.PTTL(ctx, key)
		return nil
	})
	if err != nil || !want(ttl.Val()) {
		return nil
	}
	pid, ok := ownerOf(get.Val())
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
// the locks that have no key, to the first process), kills the Redis master under it
// (failover), or cuts it off from the lock's server (partition), once trigger orders are in,
// and says what it did. Its error is for a process it could not signal or cut off, which
// ends the run.
func (r *run) injure(ctx context.Context, s Scenario, lock, key string, c *crowd) (string, error) {
	for c.sold.Load() < int64(s.Trigger) {
		select {
		case <-ctx.Done():
			return "no fault: the sale ended before " + strconv.Itoa(s.Trigger) + " orders", nil
		case <-time.After(5 * time.Millisecond):
		}
	}
	switch s.Fault {
	case "failover":
		if isZooKeeper(lock) {
			return r.zkFailover(ctx, key), nil
		}
		return r.failover(ctx, lock, key), nil
	case "partition":
		return r.partition(ctx, s, lock, key)
	}
	target, holding := r.apis[0], "mid-sale (this lock has no key: the first process)"
	var stopped time.Time
	if lock == "none" || lock == "mutex" {
		if err := target.Signal(syscall.SIGSTOP); err != nil {
			return "", err
		}
		stopped = time.Now()
	} else {
		a, at, err := r.stopHolder(ctx, s, lock, key)
		if errors.Is(err, errSignal) {
			return "", err
		}
		if err != nil {
			return "no fault: " + err.Error(), nil
		}
		target, holding, stopped = a, "holding "+key, at
	}
	// The target is stopped now: the fault lands on the state it was stopped in.
	pid := target.Pid()
	if s.Fault == "kill" {
		if err := target.Kill(); err != nil {
			return "", err
		}
		r.recordFault(key, pid, history.FaultKill, stopped, time.Now())
		return fmt.Sprintf("SIGKILL to %s (pid %d), %s", target.Name, pid, holding), nil
	}
	time.Sleep(s.Pause)
	if err := target.Signal(syscall.SIGCONT); err != nil {
		return "", err
	}
	r.recordFault(key, pid, history.FaultPause, stopped, time.Now())
	return fmt.Sprintf("SIGSTOP to %s (pid %d), %s, for %v, then SIGCONT", target.Name, pid, holding, s.Pause), nil
}

// errSignal marks stopHolder's errors that come from a signal that could not be sent.
var errSignal = errors.New("signal")

// stopHolder stops (SIGSTOP) the process that holds key in the state the scenario needs (for a
// pause, after its read of the stock) and returns it and when it stopped it. It checks the key
// again once the process is stopped, and looks again for up to 5 s if the lock changed hands
// meanwhile (docs/lab.md).
func (r *run) stopHolder(ctx context.Context, s Scenario, lock, key string) (*procs.API, time.Time, error) {
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
	tl := newTail(lockHistory(r.historyDir), key)
	for {
		a, err := holder(hctx, r.rdb, key, r.apis, want)
		if err != nil {
			return nil, time.Time{}, err
		}
		if s.Fault == "pause" {
			if ok, err := r.thinking(hctx, tl, key, a, want); err != nil {
				return nil, time.Time{}, err
			} else if !ok {
				continue
			}
		}
		if err := a.Signal(syscall.SIGSTOP); err != nil {
			return nil, time.Time{}, errors.Join(errSignal, err)
		}
		stopped := time.Now()
		if holderNow(hctx, r.rdb, key, []*procs.API{a}, want) == a {
			return a, stopped, nil
		}
		if err := a.Signal(syscall.SIGCONT); err != nil {
			return nil, time.Time{}, errors.Join(errSignal, err)
		}
	}
}

// thinking waits until a, which held key a moment ago, has read the stock under it and thinks,
// as the lock history that the processes append to says (tail): true then; false once a no
// longer holds key. Its error is for ctx's end or a history that cannot be read.
func (r *run) thinking(ctx context.Context, tl *tail, key string, a *procs.API, want func(time.Duration) bool) (bool, error) {
	for {
		if err := tl.poll(); err != nil {
			return false, err
		}
		if tl.thinking(a.Pid()) {
			return true, nil
		}
		if holderNow(ctx, r.rdb, key, []*procs.API{a}, want) != a {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("pid %d did not read the stock under %s: %w", a.Pid(), key, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// ownerOf is the process id at the start of a lab lock's value, "<pid>:..." (internal/lab's
// OwnerOf, the format every lab lock writes).
func ownerOf(value string) (pid int, ok bool) {
	head, _, found := strings.Cut(value, ":")
	pid, err := strconv.Atoi(head)
	return pid, found && err == nil
}
