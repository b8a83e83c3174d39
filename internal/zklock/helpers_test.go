package zklock_test

import (
	"os"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
	"github.com/seckill/seckill/internal/zklock"
)

// ensemble returns the servers of a ZooKeeper for the tests that need no fault: those of
// ZOOKEEPER_SERVERS if set (make zookeeper-up), else a standalone member that this test
// starts (and stops when it ends).
func ensemble(t testing.TB) []string {
	t.Helper()
	if s := os.Getenv("ZOOKEEPER_SERVERS"); s != "" {
		return strings.Split(s, ",")
	}
	return servers.ZooKeeperServers(servers.StartZooKeeper(t, 1))
}

// newClient returns a lock client of servers (a process of its own), closed when the test ends.
func newClient(t testing.TB, srv []string) *zklock.Client {
	t.Helper()
	c := zklock.New(srv, zklock.Options{})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// lockKey returns a lock name of the test's own.
func lockKey() string { return testenv.Name("seckill-test/lock/") }
