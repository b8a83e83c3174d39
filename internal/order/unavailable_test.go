package order_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// redisCase makes a redis-server of the test's own fail in one way and names the text the
// error must carry.
type redisCase struct {
	name string
	want string // in the error's text: the reply's prefix, or go-redis's message ("a|b": either)
	opts func(*redis.Options)
	// fault breaks the server or rdb (the client under test) and returns what undoes it.
	fault func(t *testing.T, admin, rdb *redis.Client) (lift func())
}

// TestIsUnavailableRedis: each way a Redis server says it cannot serve for now is made for
// real, and the errors of the lock (dlock.Obtain, on one Redis and as a one-node Redlock) and
// of the redis strategy's gate (Gate.Admit), the scripts a purchase runs, must carry it and
// count as unavailable.
func TestIsUnavailableRedis(t *testing.T) {
	t.Parallel()
	// DEBUG makes LOADING; a protected config (dir) makes MISCONF.
	red := servers.StartRedis(t, "--enable-debug-command", "yes", "--enable-protected-configs", "yes")
	admin := red.Client()
	set := red.ConfigSet
	lifts := func(t *testing.T, f *servers.RedisFault) func() {
		return func() {
			f.Lift(t)
			if err := f.Err(); err != nil {
				t.Error(err)
			}
		}
	}
	cases := []redisCase{
		{name: "out of memory", want: "OOM ", fault: func(t *testing.T, _, _ *redis.Client) func() {
			return lifts(t, red.OutOfMemory(t))
		}},
		{name: "replica", want: "READONLY ", fault: func(t *testing.T, _, _ *redis.Client) func() {
			return lifts(t, red.ReplicaOfSilentMaster(t, true))
		}},
		{name: "replica without master", want: "MASTERDOWN ", fault: func(t *testing.T, _, _ *redis.Client) func() {
			return lifts(t, red.ReplicaOfSilentMaster(t, false))
		}},
		{name: "no replicas", want: "NOREPLICAS ", fault: func(t *testing.T, _, _ *redis.Client) func() {
			set(t, "min-replicas-to-write", "1")
			return func() { set(t, "min-replicas-to-write", "0") }
		}},
		{name: "failed snapshot", want: "MISCONF ", fault: func(t *testing.T, admin, _ *redis.Client) func() {
			was := admin.ConfigGet(context.Background(), "dir").Val()["dir"]
			dir := filepath.Join(t.TempDir(), "gone")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			set(t, "dir", dir, "save", "3600 1")
			if err := os.Remove(dir); err != nil { // the snapshot cannot be written
				t.Fatal(err)
			}
			mustDo(t, admin, "BGSAVE")
			testenv.Eventually(t, 5*time.Second, "the snapshot to fail", func() bool {
				info, _ := admin.Info(context.Background(), "persistence").Result()
				return strings.Contains(info, "rdb_last_bgsave_status:err")
			})
			return func() { set(t, "save", "", "dir", was) }
		}},
		{name: "busy script", want: "BUSY ", fault: func(t *testing.T, admin, _ *redis.Client) func() {
			f := red.Busy(t, time.Second)
			waitReply(t, admin, "BUSY ")
			return lifts(t, f)
		}},
		{name: "loading", want: "LOADING ", fault: func(t *testing.T, admin, _ *redis.Client) func() {
			f := red.Loading(t, 5000)
			waitReply(t, admin, "LOADING ")
			return lifts(t, f)
		}},
		// Redis writes the error and closes at once: go-redis mostly fails writing its HELLO
		// or reading its reply.
		{name: "max clients", want: "max number of clients reached|broken pipe|connection reset|EOF", fault: func(t *testing.T, admin, _ *redis.Client) func() {
			// admin's connection is the one left: rdb's next is refused, and so would be a new
			// connection to lift the fault, hence admin's own CONFIG SET.
			mustDo(t, admin, "CONFIG", "SET", "maxclients", "1")
			mustDo(t, admin, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
			return func() { mustDo(t, admin, "CONFIG", "SET", "maxclients", "10000") }
		}},
		{name: "pool timeout", want: redis.ErrPoolTimeout.Error(),
			opts: func(o *redis.Options) { o.PoolSize, o.PoolTimeout = 1, 50*time.Millisecond },
			fault: func(t *testing.T, admin, rdb *redis.Client) func() {
				blocked := make(chan struct{})
				go func() { defer close(blocked); rdb.BLPop(context.Background(), 5*time.Second, "wake") }()
				testenv.Eventually(t, 5*time.Second, "the only connection to block", func() bool { return rdb.PoolStats().IdleConns == 0 && rdb.PoolStats().TotalConns == 1 })
				time.Sleep(20 * time.Millisecond) // BLPOP is on the wire
				return func() { admin.LPush(context.Background(), "wake", 1); <-blocked }
			}},
		{name: "closed client", want: redis.ErrClosed.Error(), fault: func(t *testing.T, _, rdb *redis.Client) func() {
			rdb.Close()
			return func() {}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRedisCase(t, red.Addr, admin, c) })
	}
}

// checkRedisCase seeds a gate, makes c's fault, and checks the locks' and the gate's errors.
func checkRedisCase(t *testing.T, addr string, admin *redis.Client, c redisCase) {
	opts := &redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true}
	if c.opts != nil {
		c.opts(opts)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	keys := inventory.Keys{Prefix: strings.ReplaceAll(t.Name(), " ", "_")}
	gate := inventory.NewGate(rdb, keys)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := gate.StartSeeding(1).Publish(ctx, inventory.SeedInit, 10); err != nil {
		t.Fatal(err)
	}
	locks := dlock.New(rdb, nil)
	// Redlock joins the nodes' errors. A node timeout longer than a reply can take under
	// load: this is about the reply, not the timeout.
	redlock := dlock.NewRedlock([]redis.UniversalClient{rdb}, &dlock.ClientOptions{NodeTimeout: 5 * time.Second})
	defer locks.Close()
	defer redlock.Close()
	lift := c.fault(t, admin, rdb)
	_, lockErr := locks.Obtain(ctx, keys.Lock(1), time.Second, nil)
	_, redlockErr := redlock.Obtain(ctx, keys.Lock(2), time.Second, nil)
	gateErr := gate.Admit(ctx, 1, 7, "attempt", time.Minute)
	lift()
	for _, err := range []error{lockErr, redlockErr, gateErr} {
		checkUnavailable(t, err, c.want, true)
	}
}

// checkUnavailable fails the test unless err carries want in its text ("a|b": either) and
// IsUnavailable(err) is unavailable.
func checkUnavailable(t *testing.T, err error, want string, unavailable bool) {
	t.Helper()
	if err == nil || !slices.ContainsFunc(strings.Split(want, "|"), func(w string) bool { return strings.Contains(err.Error(), w) }) {
		t.Errorf("err = %v, want one with %q", err, want)
	} else if order.IsUnavailable(err) != unavailable {
		t.Errorf("IsUnavailable(%q) = %v, want %v", err, !unavailable, unavailable)
	}
}

// TestIsUnavailableNotForBugs: replies that mean a bug or a rule of the data stay errors,
// so that they are answered 500 and logged.
func TestIsUnavailableNotForBugs(t *testing.T) {
	t.Parallel()
	red := servers.StartRedis(t)
	rdb := red.Client()
	ctx := context.Background()
	keys := inventory.Keys{Prefix: "bugs"}
	gate := inventory.NewGate(rdb, keys)
	mustDo(t, rdb, "SET", keys.GateStock(1), "10")
	mustDo(t, rdb, "SET", keys.GateBuyers(1), "not a set")
	mustDo(t, rdb, "SET", "k", "v")
	mustDo(t, rdb, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	dump := rdb.Dump(ctx, "k").Val()
	for _, c := range []struct {
		want string
		err  error
	}{
		{"WRONGTYPE ", gate.Admit(ctx, 1, 7, "attempt", time.Minute)},
		{"NOSCRIPT ", rdb.EvalSha(ctx, strings.Repeat("0", 40), nil).Err()},
		{"ERR boom", rdb.Eval(ctx, "return redis.error_reply('ERR boom')", nil).Err()},
		{"ERR Unknown Redis command", rdb.Eval(ctx, "return redis.call('NOSUCHCOMMAND')", nil).Err()},
		{"BUSYGROUP ", rdb.XGroupCreate(ctx, "s", "g", "$").Err()},
		{"BUSYKEY ", rdb.Restore(ctx, "k", 0, dump).Err()},
		{"context canceled", rdb.Get(canceledCtx(), "k").Err()},
	} {
		checkUnavailable(t, c.err, c.want, false)
	}
	if order.IsUnavailable(nil) || order.IsUnavailable(errors.New("OOPS")) {
		t.Error("IsUnavailable of nil or a plain error = true")
	}
}

func canceledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// mustDo runs one command, failing the test if it fails.
func mustDo(t *testing.T, rdb *redis.Client, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// waitReply waits until PING gets a reply starting with prefix.
func waitReply(t *testing.T, rdb *redis.Client, prefix string) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, "a "+prefix+"reply", func() bool {
		err := rdb.Ping(context.Background()).Err()
		return err != nil && strings.HasPrefix(err.Error(), prefix)
	})
}

// TestIsUnavailableClosedLockClient: the lock client, closed at shutdown, is unavailable too.
func TestIsUnavailableClosedLockClient(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer rdb.Close()
	locks := dlock.New(rdb, nil)
	locks.Close()
	_, err := locks.Obtain(context.Background(), "k", time.Second, nil)
	if !errors.Is(err, dlock.ErrClosed) || !order.IsUnavailable(err) {
		t.Errorf("Obtain after Close: err = %v, IsUnavailable = %v; want dlock.ErrClosed, true", err, order.IsUnavailable(err))
	}
}
