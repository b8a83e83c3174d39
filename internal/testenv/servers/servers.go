// Package servers is internal/launch for tests: it starts redis-server, a Redis Cluster and a
// Redis Sentinel deployment (StartRedis, StartRedisCluster, StartSentinels;
// StartRedisFakeClock for a redis-server whose wall clock the test steps, under libfaketime),
// a PostgreSQL cluster (StartPostgres), PostgreSQL with failover managed by Patroni
// (StartPatroni), an etcd member or an etcd cluster (StartEtcd,
// StartEtcdCluster), cmd/api built for the test binary (BuildAPI, StartAPI), each on a free
// loopback port, and headless Chromium (StartBrowser); an API process may run in a network
// namespace of the test's own, which the test can partition silently from PostgreSQL or Redis
// (StartNetns, StartAPIIn). Each wraps its launch counterpart: it fails the test where launch
// returns an error, skips it where launch cannot run here (launch.ErrUnavailable: a binary
// or root missing; under SECKILL_REQUIRE_ALL=1, as in CI, it fails it: see package missing),
// and stops what it started when the test ends (t.Cleanup). Every process
// also dies with the test binary (Pdeathsig) if that ends first.
//
// It is for tests only: no shipped binary imports it (the lab, internal/labrun, uses launch).
// It imports nothing of seckill but internal/launch, internal/testenv/faultproxy and
// internal/testenv/missing, which import nothing of seckill but internal/faultproxy (cmd/api
// is built by its import path), so the tests of every package can use it, internal/dlock's
// included.
//
// SERVERS_LOGS=1 prints the tail of each API process's log when its test ends, as a failed
// test does; SERVERS_LOGDIR=<dir> writes each whole API log to <dir>/<test>-<name>.log.
package servers

import (
	"errors"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/launch"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/missing"
)

// T is what the launchers need of their caller: a test.
type T = testing.TB

// Buffer is a log buffer a server process and the test share (see launch.Buffer).
type Buffer = launch.Buffer

// FreeAddr returns a loopback host:port that is free now and lies below the kernel's
// ephemeral port range, never the same twice in one test binary (see launch.FreeAddr), or
// fails the test.
func FreeAddr(t T) string {
	t.Helper()
	addr, err := launch.FreeAddr()
	check(t, err)
	return addr
}

// BuildAPI returns the path of cmd/api built for this test binary (see launch.BuildAPI), or
// fails the test.
func BuildAPI(t T) string {
	t.Helper()
	path, err := launch.BuildAPI()
	check(t, err)
	return path
}

// StableProxy starts a fault proxy to target on a port FreeAddr picks, so that Down and Up
// keep its address (see launch.StableProxy); it is shut down when the test ends.
func StableProxy(t T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := launch.StableProxy(target)
	check(t, err)
	t.Cleanup(p.Close)
	return &faultproxy.Proxy{Proxy: p}
}

// check skips the test if err says that a launcher cannot run here (see missing.Skip), and
// fails it on any other error.
func check(t T, err error) {
	t.Helper()
	if errors.Is(err, launch.ErrUnavailable) {
		missing.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// closeAtEnd closes c when the test ends, reporting its error.
func closeAtEnd(t T, what string, c func() error) {
	t.Cleanup(func() {
		if err := c(); err != nil {
			t.Errorf("close %s: %v", what, err)
		}
	})
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
