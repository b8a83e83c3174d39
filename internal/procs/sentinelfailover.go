package procs

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a caller does with a Sentinel deployment (sentinel.go): hold its replica back, fail
// over, and watch the sentinels agree on a new master.

// HoldBackReplica waits for the replica to catch up, then stalls its link, which it still
// believes up.
func (d *Sentinels) HoldBackReplica() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := d.dataClient(d.Master.Addr).Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		return fmt.Errorf("WAIT for the replica = %d, %v", n, err)
	}
	d.Link.Stall()
	return nil
}

// ForceFailover runs SENTINEL FAILOVER, promoting the replica while the old master runs.
func (d *Sentinels) ForceFailover() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.withSentinel(d.nodes[0].addr, func(c *redis.SentinelClient) error {
		return c.Failover(ctx, d.Name).Err()
	}); err != nil {
		return fmt.Errorf("SENTINEL FAILOVER %s: %w", d.Name, err)
	}
	return nil
}

// MasterAddr returns the master all sentinels report, or "" if they disagree.
func (d *Sentinels) MasterAddr(ctx context.Context) string {
	seen := ""
	for i, n := range d.nodes {
		var addr []string
		err := d.withSentinel(n.addr, func(c *redis.SentinelClient) error {
			var err error
			addr, err = c.GetMasterAddrByName(ctx, d.Name).Result()
			return err
		})
		if err != nil || len(addr) != 2 {
			return ""
		}
		a := net.JoinHostPort(addr[0], addr[1])
		if i > 0 && a != seen {
			return ""
		}
		seen = a
	}
	return seen
}

// WaitFailover waits until every sentinel reports a master other than from, and returns it.
func (d *Sentinels) WaitFailover(ctx context.Context, from string) (string, error) {
	for {
		if to := d.MasterAddr(ctx); to != "" && to != from && d.isMaster(ctx, to) {
			return to, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no failover from %s: the sentinels report %q: %w", from, d.MasterAddr(context.Background()), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
