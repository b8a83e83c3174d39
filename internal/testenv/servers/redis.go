package servers

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/launch"
)

// RedisBin returns the path of redis-server, or skips the test.
func RedisBin(t T) string {
	t.Helper()
	path, err := launch.RedisBin()
	check(t, err)
	return path
}

// Redis is a redis-server process of the test's own (see launch.Redis), killed and its Dir
// removed when the test ends. Its methods that take no test fail the one that started it, so
// call them from that test's goroutine. It is safe for concurrent use.
type Redis struct {
	*launch.Redis
	t T
}

// StartRedis starts a redis-server without persistence on a free loopback port and waits
// until it answers PING (see launch.StartRedis).
func StartRedis(t T, extra ...string) *Redis {
	t.Helper()
	s, err := launch.StartRedis(extra...)
	check(t, err)
	closeAtEnd(t, "redis-server "+s.Addr, s.Close)
	return &Redis{Redis: s, t: t}
}

// StartRedisReplica is StartRedis for a replica of the master at addr (--replicaof): it
// waits until the replica has synced (master_link_status:up).
func StartRedisReplica(t T, master string, extra ...string) *Redis {
	t.Helper()
	s, err := launch.StartRedisReplica(master, extra...)
	check(t, err)
	closeAtEnd(t, "redis-server "+s.Addr, s.Close)
	return &Redis{Redis: s, t: t}
}

// StartRedisCluster starts n redis-server masters in cluster mode, shares the 16384 slots
// between them, joins them, and waits until every node reports the cluster ok. Their
// addresses (Addrs) seed a cluster client.
func StartRedisCluster(t T, n int) []*Redis {
	t.Helper()
	servers, err := launch.StartRedisCluster(n)
	check(t, err)
	out := make([]*Redis, n)
	for i, s := range servers {
		closeAtEnd(t, "redis-server "+s.Addr, s.Close)
		out[i] = &Redis{Redis: s, t: t}
	}
	return out
}

// Addrs returns the servers' addresses.
func Addrs(servers []*Redis) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	return addrs
}

// Start starts the server again and waits until it answers PING (see launch.Redis.Start).
func (s *Redis) Start() {
	s.t.Helper()
	must(s.t, s.Redis.Start())
}

// Pause freezes the server (SIGSTOP). Resume lets it go on.
func (s *Redis) Pause() {
	s.t.Helper()
	must(s.t, s.Redis.Pause())
}

// Resume continues a paused server (SIGCONT).
func (s *Redis) Resume() {
	s.t.Helper()
	must(s.t, s.Redis.Resume())
}

// Client returns a plain client of the server, closed when the test ends. It honours
// context deadlines and retries nothing, so a test sees each reply as the server sent it.
func (s *Redis) Client() *redis.Client {
	rdb := s.Redis.Client()
	s.t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Promote makes a replica a master (REPLICAOF NO ONE), as a failover does.
func (s *Redis) Promote(t T) {
	t.Helper()
	must(t, s.Redis.Promote())
}

// ConfigSet sets configuration parameters (name, value, ...), failing the test if it cannot.
func (s *Redis) ConfigSet(t T, nameValues ...string) {
	t.Helper()
	must(t, s.Redis.ConfigSet(nameValues...))
}

// Do runs one command on database db, failing the test if it fails.
func (s *Redis) Do(t T, db int, args ...any) {
	t.Helper()
	must(t, s.Redis.Do(db, args...))
}

// RedisFault is one fault made on a Redis (see launch.RedisFault). It is not safe for
// concurrent use.
type RedisFault struct{ *launch.RedisFault }

// Lift ends the fault, failing the test if it cannot (see launch.RedisFault.Lift).
func (f *RedisFault) Lift(t T) {
	t.Helper()
	must(t, f.RedisFault.Lift())
}

func fault(t T, f *launch.RedisFault, err error) *RedisFault {
	t.Helper()
	must(t, err)
	return &RedisFault{f}
}

// OutOfMemory makes every write get OOM (see launch.Redis.OutOfMemory).
func (s *Redis) OutOfMemory(t T) *RedisFault {
	t.Helper()
	f, err := s.Redis.OutOfMemory()
	return fault(t, f, err)
}

// ReplicaOfSilentMaster makes writes get READONLY, or everything MASTERDOWN when serveStale
// is false (see launch.Redis.ReplicaOfSilentMaster).
func (s *Redis) ReplicaOfSilentMaster(t T, serveStale bool) *RedisFault {
	t.Helper()
	f, err := s.Redis.ReplicaOfSilentMaster(serveStale)
	return fault(t, f, err)
}

// Busy makes every other command get BUSY for d (see launch.Redis.Busy).
func (s *Redis) Busy(t T, d time.Duration) *RedisFault {
	t.Helper()
	f, err := s.Redis.Busy(d)
	return fault(t, f, err)
}

// Loading makes other clients get LOADING while the server loads its dataset again with keys
// filler keys (see launch.Redis.Loading).
func (s *Redis) Loading(t T, keys int) *RedisFault {
	t.Helper()
	f, err := s.Redis.Loading(keys)
	return fault(t, f, err)
}

// Snapshot makes the server write an RDB snapshot now and waits until it is written (see
// launch.Redis.Snapshot).
func (s *Redis) Snapshot(t T) {
	t.Helper()
	must(t, s.Redis.Snapshot())
}

// AOFMark is how far a server's append-only file reached at one moment (MarkAOF).
type AOFMark = launch.AOFMark

// MarkAOF notes how far the server's append-only file reaches now (see launch.Redis.MarkAOF).
func (s *Redis) MarkAOF(t T) AOFMark {
	t.Helper()
	m, err := s.Redis.MarkAOF()
	must(t, err)
	return m
}

// CutAOF truncates the append-only file of the stopped server back to m and returns how many
// bytes it cut (see launch.Redis.CutAOF).
func (s *Redis) CutAOF(t T, m AOFMark) int64 {
	t.Helper()
	n, err := s.Redis.CutAOF(m)
	must(t, err)
	return n
}

// FaketimeLib returns the path of libfaketime.so.1, or skips the test.
func FaketimeLib(t T) string {
	t.Helper()
	path, err := launch.FaketimeLib()
	check(t, err)
	return path
}

// RedisClock is the wall clock of a redis-server started by StartRedisFakeClock (see
// launch.RedisClock). It is safe for concurrent use.
type RedisClock struct{ *launch.RedisClock }

// StartRedisFakeClock is StartRedis for a server whose wall clock the test steps with the
// returned RedisClock; it starts with no offset. It skips the test without libfaketime.
func StartRedisFakeClock(t T, extra ...string) (*Redis, *RedisClock) {
	t.Helper()
	s, c, err := launch.StartRedisFakeClock(extra...)
	check(t, err)
	closeAtEnd(t, "redis-server "+s.Addr, s.Close)
	return &Redis{Redis: s, t: t}, &RedisClock{c}
}

// Step moves the server's wall clock by d and waits until the server's TIME shows it (see
// launch.RedisClock.Step).
func (c *RedisClock) Step(t T, d time.Duration) time.Time {
	t.Helper()
	at, err := c.RedisClock.Step(d)
	must(t, err)
	return at
}

// Skew is the server's TIME less the real time (see launch.RedisClock.Skew).
func (c *RedisClock) Skew(t T) time.Duration {
	t.Helper()
	d, err := c.RedisClock.Skew()
	must(t, err)
	return d
}

// must fails the test on err.
func must(t T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
