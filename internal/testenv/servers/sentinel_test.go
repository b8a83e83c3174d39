package servers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// failoverClient is go-redis's failover client of d, as the service makes one.
func failoverClient(t *testing.T, d *servers.Sentinels, opt servers.SentinelOptions) *redis.Client {
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: d.Name, SentinelAddrs: d.Addrs(),
		Password: opt.Password, SentinelPassword: opt.SentinelPassword, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// TestSentinelFailoverLosesHeldBackWrites: with the replica held back, the master takes a
// write the replica never gets; the master is killed, the sentinels promote the replica, and
// the write is gone, while the one before the hold is there. A failover client follows.
func TestSentinelFailoverLosesHeldBackWrites(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	start := time.Now()
	d := servers.StartSentinels(t, nil)
	t.Logf("master, replica and 3 sentinels ready in %v", time.Since(start).Round(time.Millisecond))
	ctx := context.Background()
	rdb := failoverClient(t, d, servers.SentinelOptions{})
	if err := rdb.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	d.HoldBackReplica(t)
	if err := rdb.Set(ctx, "lost", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	d.Master.Stop()
	killed := time.Now()
	if got := d.AwaitFailover(t, d.Master.Addr, 30*time.Second); got != d.Replica.Addr {
		t.Fatalf("new master %s, want the replica %s", got, d.Replica.Addr)
	}
	t.Logf("the sentinels report the replica as master %v after the kill (down-after %v)",
		time.Since(killed).Round(time.Millisecond), servers.SentinelDownAfter)
	testenv.Eventually(t, 10*time.Second, "the failover client writing to the new master", func() bool {
		return rdb.Set(ctx, "after", "1", 0).Err() == nil
	})
	if n := rdb.Exists(ctx, "kept").Val(); n != 1 {
		t.Error("the write the replica had before the hold is gone")
	}
	if err := rdb.Get(ctx, "lost").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET of the write the replica missed = %v, want redis.Nil: the failover lost nothing", err)
	}
}

// TestSentinelForcedFailoverWithPasswords: a forced failover (SENTINEL FAILOVER) with the
// old master still up, every server and sentinel asking for a password. The old master is
// made a replica of the new one and loses what the new one never had.
func TestSentinelForcedFailoverWithPasswords(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	opt := servers.SentinelOptions{Password: "data-pw", SentinelPassword: "sentinel-pw"}
	d := servers.StartSentinels(t, &opt)
	ctx := context.Background()
	rdb := failoverClient(t, d, opt)
	d.HoldBackReplica(t)
	if err := rdb.Set(ctx, "lost", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	d.ForceFailover(t)
	if got := d.AwaitFailover(t, d.Master.Addr, 30*time.Second); got != d.Replica.Addr {
		t.Fatalf("new master %s, want the replica %s", got, d.Replica.Addr)
	}
	testenv.Eventually(t, 10*time.Second, "the failover client on the new master, without the lost write", func() bool {
		return errors.Is(rdb.Get(ctx, "lost").Err(), redis.Nil)
	})
	old := d.MasterClient()
	testenv.Eventually(t, 30*time.Second, "the old master made a replica, its write gone", func() bool {
		role, err := old.Do(ctx, "ROLE").Slice()
		return err == nil && role[0] == "slave" && errors.Is(old.Get(ctx, "lost").Err(), redis.Nil)
	})
}
