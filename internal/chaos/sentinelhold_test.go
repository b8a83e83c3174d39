//go:build linux

package chaos_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// holdOutlasts fails the test unless every sentinel of d leaves the replica behind the proxy
// for longer than the test may still run: past failover-timeout a sentinel points the
// replica at the master directly, around the proxy, and the hold is gone.
func holdOutlasts(t *testing.T, d *servers.Sentinels) {
	t.Helper()
	left := time.Hour // go test -timeout 0: no deadline
	if deadline, ok := t.Deadline(); ok {
		left = time.Until(deadline)
	}
	for _, addr := range d.Addrs() {
		c := redis.NewSentinelClient(&redis.Options{Addr: addr})
		m, err := c.Master(context.Background(), d.Name).Result()
		c.Close()
		if err != nil {
			t.Fatalf("SENTINEL MASTER %s at %s: %v", d.Name, addr, err)
		}
		ms, err := strconv.ParseInt(m["failover-timeout"], 10, 64)
		if err != nil {
			t.Fatalf("sentinel %s: failover-timeout %q: %v", addr, m["failover-timeout"], err)
		}
		if timeout := time.Duration(ms) * time.Millisecond; timeout <= left {
			t.Fatalf("sentinel %s: failover-timeout %v, not above the %v the test may still run: it would point the held-back replica at the master",
				addr, timeout, left.Round(time.Second))
		}
	}
}

// stillHeldBack fails the test unless the replica of d still follows the proxy (d.Link), so
// that what the master took since the hold is not on the replica.
func stillHeldBack(t *testing.T, d *servers.Sentinels, when string) {
	t.Helper()
	info, err := d.ReplicaClient().Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatalf("%s: INFO replication of the replica: %v", when, err)
	}
	field := func(name string) string {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
				return v
			}
		}
		return ""
	}
	if got := net.JoinHostPort(field("master_host"), field("master_port")); field("role") != "slave" || got != d.Link.Addr() {
		t.Fatalf("%s: the replica (role %s) follows %s, not the proxy %s that holds it back (the master is %s)",
			when, field("role"), got, d.Link.Addr(), d.Master.Addr)
	}
}
