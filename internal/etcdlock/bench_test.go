package etcdlock_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/lockbench"
	"github.com/seckill/seckill/internal/testenv/servers"
	"github.com/seckill/seckill/internal/zklock"
)

// backend is one lock store, as one process holds it: Obtain waits up to a minute for key
// and returns the lock's release.
type backend = lockbench.Lock

// backendTTL is the lease of every lock of the benchmark, as in dlock's BenchmarkPeers.
const backendTTL = 5 * time.Second

// backends returns one process's clients of each lock store: dlock on the Redis at
// REDIS_ADDR ("dlock"), this package on the etcd at ETCD_ENDPOINTS ("etcd1": the one member
// of `make up`) and on the three members of cluster ("etcd3"), and internal/zklock on the
// three members of the ZooKeeper ensemble ("zk3"). Each call stands for a process of its own:
// its own Redis client and dlock Client, its own etcd clients, its own ZooKeeper session; all
// are closed when the benchmark ends.
func backends(b *testing.B, cluster, ensemble []string) []backend {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(b)})
	b.Cleanup(func() { _ = rdb.Close() })
	dl := dlock.New(rdb, nil)
	b.Cleanup(func() { _ = dl.Close() })
	etcdBackend := func(name string, endpoints ...string) backend {
		c := newClient(b, endpoints...)
		return backend{Name: name, Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := c.Obtain(ctx, key, backendTTL, time.Minute)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}}
	}
	return []backend{
		{Name: "dlock", Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
			l, err := dl.Obtain(ctx, key, backendTTL, &dlock.Options{Wait: time.Minute})
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
		etcdBackend("etcd1"), // ETCD_ENDPOINTS
		etcdBackend("etcd3", cluster...),
		zkBackend(b, "zk3", ensemble),
	}
}

// zkBackend is one process's client of internal/zklock on the ZooKeeper ensemble at servers
// (one session of backendTTL), closed when the benchmark ends.
func zkBackend(b *testing.B, name string, servers []string) backend {
	c := zklock.New(servers, zklock.Options{})
	b.Cleanup(func() { _ = c.Close() })
	return backend{Name: name, Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
		l, err := c.Obtain(ctx, key, backendTTL, time.Minute)
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}}
}

// backendKey returns a lock name of the benchmark's own, the same in each store; at cleanup
// it deletes what dlock leaves in Redis (the fence). etcd's keys go with their release.
func backendKey(b *testing.B) string {
	key := testenv.Name("seckill-bench/lock/")
	b.Cleanup(func() {
		rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(b)})
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = rdb.Del(ctx, key, dlock.FenceKey(key)).Err()
	})
	return key
}

// backendRounds, backendOps and backendWindow: each measurement is backendRounds rounds, each
// running every store for backendOps operations or backendWindow of its own time, whichever
// ends first (dlock does its operations well within the window; etcd, some 10 to 30 times
// slower here, runs out of time), the stores taking turns (every 10 operations uncontended,
// see lockbench.Uncontended), so that the machine's drift hits all three alike; the figures
// are the medians over the rounds.
const (
	backendRounds = 5
	backendOps    = 2000
	backendWindow = 2 * time.Second
)

// BenchmarkBackends compares the product lock's stores in one run (make bench-locks; run it
// with -benchtime 1x): dlock on Redis, this package on one etcd member (ETCD_ENDPOINTS) and on
// a three-member cluster it starts (servers.StartEtcdCluster), and internal/zklock on a
// three-member ZooKeeper ensemble it starts (servers.StartZooKeeper). It measures the lock
// alone: an uncontended Obtain + Release, and 64 goroutines handing one key around through
// 1 client of each store, or through 4 standing for four processes. It reports each store's
// median (us/op uncontended, handoffs/s contended) and each other store's ratio to dlock (above 1
// is slower uncontended; below 1 is slower contended).
func BenchmarkBackends(b *testing.B) {
	testenv.RedisAddr(b)     // skips without Redis,
	testenv.EtcdEndpoints(b) // and without etcd
	cluster := servers.EtcdEndpoints(servers.StartEtcdCluster(b, 3))
	ensemble := servers.ZooKeeperServers(servers.StartZooKeeper(b, 3))
	b.Run("uncontended", func(b *testing.B) {
		key := backendKey(b)
		bs := backends(b, cluster, ensemble)
		for b.Loop() {
			reportRatios(b, bs, lockbench.Uncontended(b, bs, key, backendRounds, backendOps, backendWindow))
		}
	})
	for _, n := range []int{1, 4} {
		b.Run("contended/clients="+strconv.Itoa(n), func(b *testing.B) {
			key := backendKey(b)
			clients := make([][]backend, n) // clients[i][j]: store j's i-th client (process)
			for i := range clients {
				clients[i] = backends(b, cluster, ensemble)
			}
			for b.Loop() {
				reportBackends(b, clients[0], "handoffs/s", func(s backend) float64 {
					j := slices.IndexFunc(clients[0], func(q backend) bool { return q.Name == s.Name })
					return lockbench.Handoffs(b, clients, j, key, backendOps, backendWindow)
				})
			}
		})
	}
}

// reportBackends measures each store backendRounds times, interleaved, and reports the
// medians in unit and each etcd's ratio to dlock.
func reportBackends(b *testing.B, bs []backend, unit string, measure func(backend) float64) {
	reportRatios(b, bs, lockbench.Medians(b, bs, backendRounds, unit, measure))
}

// reportRatios reports each etcd's median over dlock's.
func reportRatios(b *testing.B, bs []backend, med map[string]float64) {
	for _, s := range bs {
		if s.Name != "dlock" {
			b.ReportMetric(med[s.Name]/med["dlock"], s.Name+"/dlock")
		}
	}
}
