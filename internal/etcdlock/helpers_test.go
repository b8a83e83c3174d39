package etcdlock_test

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/testenv"
)

// etcdClient returns a client of the etcd at endpoints (default: ETCD_ENDPOINTS, the test is
// skipped when it is unset), closed when the test ends. Each client stands for one process.
func etcdClient(t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	return testenv.Etcd(t, endpoints...)
}

// newClient returns a lock client over its own etcd client (a process of its own), closed
// when the test ends.
func newClient(t testing.TB, endpoints ...string) *etcdlock.Client {
	t.Helper()
	c := etcdlock.New(etcdClient(t, endpoints...), nil)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// lockKey returns a lock name of the test's own.
func lockKey() string { return testenv.Name("seckill-test/lock/") }
