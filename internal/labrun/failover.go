package labrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/procs"
)

// The failover scenario: the failure the write-ups on Redis locks name as the flaw of a lock
// on one Redis with a replica. The holder's lock is written to the master; the master is lost
// before its replica has the lock; the replica is promoted; another process takes the lock on
// it while the first still works under the lock it believes it holds.
//
// Each failover cell runs on a stage of its own: a Redis Sentinel deployment (a master, a
// replica, three sentinels; internal/launch) whose replica is held back from the
// start, so that it never gets a lab lock, and three API processes of its own that find Redis
// through the sentinels (REDIS_SENTINEL_ADDRS). The run's own processes wait meanwhile.

// failoverWait bounds how long a failover cell waits for the sentinels to promote the
// replica; they take a few seconds (procs.SentinelDownAfter, then an election).
const failoverWait = 15 * time.Second

// onSentinels runs f with the run's processes and Redis swapped for a failover cell's stage,
// and stops the stage when f returns. Its error is f's, or the stage's, which could not
// start; the stage's processes that do not stop cleanly are only logged (cfg.Logf).
func (r *run) onSentinels(f func() error) error {
	d, err := procs.StartSentinels(nil)
	if err != nil {
		return fmt.Errorf("failover stage: %w", err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			r.logf("failover stage: %v", err)
		}
	}()
	if err := d.HoldBackReplica(); err != nil {
		return fmt.Errorf("failover stage: %w", err)
	}
	env := maps.Clone(r.env)
	env["REDIS_SENTINEL_ADDRS"], env["REDIS_SENTINEL_MASTER"] = strings.Join(d.Addrs(), ","), d.Name
	apis, err := procs.StartAPIs(r.cfg.APIBin, 3, env)
	if err != nil {
		return fmt.Errorf("failover stage: %w", err)
	}
	defer func() {
		if err := r.closeAPIs(apis); err != nil {
			r.logf("failover stage: %v", err)
		}
	}()
	// The runner reads the master until the failover, then the promoted replica (failover);
	// both clients are closed with the stage.
	apis0, rdb0 := r.apis, r.rdb
	r.apis, r.rdb, r.sentinels = apis, d.MasterClient(), d
	defer func() { r.apis, r.rdb, r.sentinels = apis0, rdb0, nil }()
	return f()
}

// failover kills the stage's Redis master while a process holds the lock at key (any
// process, for the locks that have no key), checks that the replica lacks that lock, and
// waits for the sentinels to promote the replica. It says what it did.
func (r *run) failover(ctx context.Context, lock, key string) string {
	d := r.sentinels
	holding, pid := "mid-sale (this lock has no key)", 0
	if lock != "none" && lock != "mutex" {
		// A holder, once it has the lock: for setnx-expire, once its EXPIRE is done too (a
		// failover between the two would fail its acquisition, not lose its lock).
		want := func(pttl time.Duration) bool { return pttl != -2 }
		if lock == "setnx-expire" {
			want = func(pttl time.Duration) bool { return pttl > 0 }
		}
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		a, err := holder(hctx, r.rdb, key, r.apis, want)
		cancel()
		if err != nil {
			return "no fault: " + err.Error()
		}
		holding, pid = fmt.Sprintf("while %s (pid %d) was holding %s", a.Name, a.Pid(), key), a.Pid()
		if err := d.ReplicaClient().Get(ctx, key).Err(); !errors.Is(err, redis.Nil) {
			return fmt.Sprintf("no fault: the replica has %s (%v): it was not held back", key, err)
		}
	}
	from := d.Master.Addr
	d.Master.Stop()
	killed := time.Now()
	wctx, cancel := context.WithTimeout(ctx, failoverWait)
	defer cancel()
	to, err := d.WaitFailover(wctx, from)
	r.recordFault(key, pid, history.FaultFailover, killed, time.Now()) // to the promotion
	if err != nil {
		return fmt.Sprintf("SIGKILL to the Redis master %s %s; %v", from, holding, err)
	}
	r.rdb = d.ReplicaClient()
	return fmt.Sprintf("SIGKILL to the Redis master %s %s; the sentinels promoted the replica %s, which lacked the lock, %.1fs later",
		from, holding, to, time.Since(killed).Seconds())
}
