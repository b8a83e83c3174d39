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

// HoldBackReplica waits until the replica has every write the master took so far (WAIT),
// then stalls the replication link: from now on the replica gets nothing, while it still
// believes its link up (for repl-timeout, 60 s), so the sentinels still promote it.
func (d *Sentinels) HoldBackReplica() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := d.dataClient(d.Master.Addr).Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		return fmt.Errorf("WAIT for the replica = %d, %v", n, err)
	}
	d.Link.Stall()
	return nil
}

// ForceFailover asks a sentinel to fail over now (SENTINEL FAILOVER), without the others'
// agreement: it promotes the replica while the old master still runs; the old master is
// made a replica of the new one some seconds later, and loses what the new one lacks.
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

// MasterAddr is the master's address as every sentinel reports it now, or "" while they
// disagree or one does not answer.
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

// WaitFailover waits until ctx ends for every sentinel to report a master other than from,
// and that master to say it is one (ROLE), and returns its address.
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
