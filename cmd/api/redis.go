package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis topologies: REDIS_ADDR names one Redis, unless it is a comma-separated list of
// cluster nodes, or REDIS_CLUSTER_ADDRS names them (it then wins over REDIS_ADDR);
// REDLOCK_ADDRS moves the product locks to Redlock over independent masters, while the gate
// of the redis strategy, the sold-out channel and the rate limits stay on REDIS_ADDR.

// minRedlockNodes is the fewest independent masters REDLOCK_ADDRS takes: with fewer, losing
// one node stops every sale, which a single Redis does as well for less.
const minRedlockNodes = 3

// redlockNodeTimeout bounds the calls to one Redlock node when it hangs: dlock bounds
// each call more tightly (ClientOptions.NodeTimeout); this is the socket's backstop.
const redlockNodeTimeout = time.Second

// parseRedisTopology fills cfg.redisCluster and cfg.redlockAddrs from the REDIS_ADDR
// already in cfg, REDIS_CLUSTER_ADDRS and REDLOCK_ADDRS.
func (cfg *config) parseRedisTopology(clusterAddrs, redlockAddrs string) []error {
	var errs []error
	list := func(name, v string) []string {
		addrs, err := parseAddrList(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", name, v, err))
		}
		return addrs
	}
	switch {
	case clusterAddrs != "":
		cfg.redisCluster = list("REDIS_CLUSTER_ADDRS", clusterAddrs)
	case strings.Contains(cfg.redisAddr, ","):
		cfg.redisCluster = list("REDIS_ADDR", cfg.redisAddr)
	}
	if redlockAddrs != "" {
		cfg.redlockAddrs = list("REDLOCK_ADDRS", redlockAddrs)
		if n := len(cfg.redlockAddrs); n > 0 && n < minRedlockNodes {
			errs = append(errs, fmt.Errorf("REDLOCK_ADDRS %q: want at least %d independent Redis masters, got %d",
				redlockAddrs, minRedlockNodes, n))
		}
	}
	return errs
}

// parseAddrList splits a comma-separated list of host:port addresses.
func parseAddrList(v string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, errors.New("want host:port addresses separated by commas")
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// newRedisClient returns the service's Redis client: a cluster client when cluster nodes
// are configured, else a client of REDIS_ADDR.
func newRedisClient(cfg config) redis.UniversalClient {
	if len(cfg.redisCluster) > 0 {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.redisCluster,
			ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second})
	}
	// One retry and one dial attempt: while Redis is down a purchase should answer 503 at
	// once, not after go-redis's default 5 dials x 3 tries (about 3 s).
	return redis.NewClient(&redis.Options{Addr: cfg.redisAddr,
		ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second})
}

// newLockNodes returns one client per REDLOCK_ADDRS node, or nil. They honour context
// deadlines and retry neither commands nor dials, so a node that is down fails at once:
// dlock bounds each call and retries at the level of the majority.
func newLockNodes(cfg config) []redis.UniversalClient {
	var nodes []redis.UniversalClient
	for _, addr := range cfg.redlockAddrs {
		nodes = append(nodes, redis.NewClient(&redis.Options{
			Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1,
			DialTimeout: redlockNodeTimeout, ReadTimeout: redlockNodeTimeout, WriteTimeout: redlockNodeTimeout,
		}))
	}
	return nodes
}

// closeAll closes every client of nodes.
func closeAll(nodes []redis.UniversalClient) {
	for _, n := range nodes {
		_ = n.Close()
	}
}

// logRedisTopology says which Redis topology the process uses.
func logRedisTopology(log *slog.Logger, cfg config) {
	data := "single"
	if len(cfg.redisCluster) > 0 {
		data = "cluster " + strings.Join(cfg.redisCluster, ",")
	} else {
		data += " " + cfg.redisAddr
	}
	locks := "same as redis"
	if len(cfg.redlockAddrs) > 0 {
		locks = "redlock " + strings.Join(cfg.redlockAddrs, ",")
	}
	log.Info("redis topology", "redis", data, "locks", locks)
}

// redisLogger sends go-redis's own messages (such as failed dials while Redis is down) to
// slog, so stderr stays JSON lines.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "msg", fmt.Sprintf(format, v...))
}
