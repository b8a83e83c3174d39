package servers_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisFakeClock: a step moves what TIME and Lua's TIME answer at once, a step forward
// expires a key early and a step back keeps one longer (Redis expires keys by its wall clock),
// blocking reads time out by it too, the offset survives a restart, and a killed server leaves
// nothing of libfaketime in /dev/shm.
func TestRedisFakeClock(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	s, clock := servers.StartRedisFakeClock(t)
	rdb := s.Client()
	ctx := context.Background()
	near := func(got, want time.Duration) bool { return (got - want).Abs() < 250*time.Millisecond }

	if err := rdb.Set(ctx, "lease", "held", 3*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	clock.Step(t, 5*time.Second)
	if skew := clock.Skew(t); !near(skew, 5*time.Second) {
		t.Errorf("TIME after a step of +5s is %v off the real clock", skew)
	}
	lua, err := rdb.Eval(ctx, "return redis.call('TIME')[1]", nil).Int64()
	if err != nil || !near(time.Duration(lua-time.Now().Unix())*time.Second, 5*time.Second) {
		t.Errorf("Lua's TIME after a step of +5s = %d (%v), real %d", lua, err, time.Now().Unix())
	}
	if err := rdb.Get(ctx, "lease").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("a key with 3s to live, after a step of +5s: %v, want it expired", err)
	}

	if err := rdb.Set(ctx, "lease", "held", 3*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	clock.Step(t, -10*time.Second)
	if got, want := clock.Offset(), -5*time.Second; got != want {
		t.Errorf("Offset = %v, want %v", got, want)
	}
	if pttl := rdb.PTTL(ctx, "lease").Val(); !near(pttl, 13*time.Second) {
		t.Errorf("PTTL of a key with 3s to live, after a step of -10s = %v, want about 13s", pttl)
	}

	// Blocking reads time out by the wall clock too: a step back of 1 s during a 0.5 s block
	// makes it last about 1.5 s (an idle queue consumer's XREADGROUP BLOCK, in seckill).
	start := time.Now()
	blpop := make(chan error, 1)
	go func() { blpop <- rdb.BLPop(ctx, 500*time.Millisecond, "empty").Err() }()
	time.Sleep(100 * time.Millisecond)
	clock.Step(t, -time.Second)
	if err := <-blpop; !errors.Is(err, redis.Nil) {
		t.Fatalf("BLPOP on an empty list: %v\n%s", err, s.Log())
	}
	if took := time.Since(start); took < 1300*time.Millisecond {
		t.Errorf("BLPOP with a 0.5s timeout and a step of -1s during it returned after %v, want about 1.5s", took)
	}

	pid := servers.RedisPid(s)
	s.Stop()
	for _, f := range []string{"/dev/shm/faketime_shm_", "/dev/shm/sem.faketime_sem_"} {
		if _, err := os.Stat(f + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s%d after the server was killed: %v, want it removed", f, pid, err)
		}
	}
	s.Start()
	if skew := clock.Skew(t); !near(skew, -6*time.Second) {
		t.Errorf("TIME after a restart is %v off the real clock, want the offset -6s kept", skew)
	}
}
