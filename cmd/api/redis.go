package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis topologies: REDIS_ADDR names one Redis, unless it is a comma-separated list of
// cluster nodes, or REDIS_CLUSTER_ADDRS names them (it then wins over REDIS_ADDR), or
// REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER name a Sentinel deployment (they win over
// REDIS_ADDR too; see sentinel.go); REDLOCK_ADDRS moves the product locks to Redlock over
// independent masters, while the gate of the redis strategy, the sold-out channel and the rate
// limits stay on REDIS_ADDR. Each address is host:port or a redis:// or rediss:// URL (see
// redisaddr.go).

// minRedlockNodes is the fewest independent masters REDLOCK_ADDRS takes: with fewer, losing
// one node stops every sale, which a single Redis does as well for less.
const minRedlockNodes = 3

// redlockNodeTimeout bounds the calls to one Redlock node when it hangs: dlock bounds
// each call more tightly (ClientOptions.NodeTimeout); this is the socket's backstop.
const redlockNodeTimeout = time.Second

// parseRedisTopology fills cfg.redis, cfg.redisCluster, cfg.redisSentinel and cfg.redlock
// from the settings s, with the credentials REDIS_USERNAME (user) and REDIS_PASSWORD
// (password) for the addresses that hold none.
func (cfg *config) parseRedisTopology(s redisSettings) []error {
	redisAddr, clusterAddrs, redlockAddrs, user, password := s.addr, s.cluster, s.redlock, s.user, s.password
	errs := cfg.parseSentinel(s)
	add := func(err ...error) {
		for _, e := range err {
			if e != nil {
				errs = append(errs, e)
			}
		}
	}
	switch {
	case s.sentinels != "" || s.master != "": // REDIS_ADDR is not used
	case clusterAddrs != "":
		nodes, err := parseRedisList("REDIS_CLUSTER_ADDRS", clusterAddrs, user, password)
		cfg.redisCluster = nodes
		add(err)
		add(checkCluster("REDIS_CLUSTER_ADDRS", nodes)...)
	case strings.Contains(redisAddr, ","):
		// A list of cluster nodes, unless the whole is one URL whose password holds a comma.
		nodes, err := parseRedisList("REDIS_ADDR", redisAddr, user, password)
		if err != nil && strings.Contains(redisAddr, "://") {
			if n, uerr := parseRedisNode(redisAddr, user, password); uerr == nil {
				cfg.redis = n
				break
			}
		}
		cfg.redisCluster = nodes
		add(err)
		add(checkCluster("REDIS_ADDR", nodes)...)
	default:
		n, err := parseRedisNode(redisAddr, user, password)
		if err != nil {
			add(fmt.Errorf("%s: %w", where("REDIS_ADDR", 0, redisAddr), err))
		}
		cfg.redis = n
	}
	if redlockAddrs != "" {
		nodes, err := parseRedisList("REDLOCK_ADDRS", redlockAddrs, user, password)
		add(err)
		if n := len(nodes); n > 0 && n < minRedlockNodes {
			add(fmt.Errorf("REDLOCK_ADDRS: want at least %d independent Redis masters, got %d",
				minRedlockNodes, n))
		}
		cfg.redlock = nodes
	}
	return errs
}

// newRedisClient returns the service's Redis client: a cluster client when cluster nodes
// are configured, a failover client when sentinels are, else a client of REDIS_ADDR.
func newRedisClient(cfg config) redis.UniversalClient {
	if cfg.redisSentinel.on() {
		return redis.NewFailoverClient(cfg.redisSentinel.failoverOptions())
	}
	if len(cfg.redisCluster) > 0 {
		n := cfg.redisCluster[0] // all nodes share user, password and TLS (checkCluster)
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(cfg.redisCluster),
			Username: n.username, Password: n.password, TLSConfig: n.tlsConfig(),
			ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second})
	}
	// One retry and one dial attempt: while Redis is down a purchase should answer 503 at
	// once, not after go-redis's default 5 dials x 3 tries (about 3 s).
	n := cfg.redis
	return redis.NewClient(&redis.Options{Addr: n.addr, Username: n.username, Password: n.password, DB: n.db,
		TLSConfig: n.tlsConfig(), ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second})
}

// newLockNodes returns one client per REDLOCK_ADDRS node, or nil. They honour context
// deadlines and retry neither commands nor dials, so a node that is down fails at once:
// dlock bounds each call and retries at the level of the majority.
func newLockNodes(cfg config) []redis.UniversalClient {
	var nodes []redis.UniversalClient
	for _, n := range cfg.redlock {
		nodes = append(nodes, redis.NewClient(&redis.Options{
			Addr: n.addr, Username: n.username, Password: n.password, DB: n.db, TLSConfig: n.tlsConfig(),
			ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1,
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

// logRedisTopology says which Redis topology the process uses: addresses, never credentials.
func logRedisTopology(log *slog.Logger, cfg config) {
	data := "single " + cfg.redis.String()
	if len(cfg.redisCluster) > 0 {
		data = "cluster " + joinNodes(cfg.redisCluster)
	}
	if cfg.redisSentinel.on() {
		data = cfg.redisSentinel.String()
	}
	locks := "same as redis"
	if len(cfg.redlock) > 0 {
		locks = "redlock " + joinNodes(cfg.redlock)
	}
	log.Info("redis topology", "redis", data, "locks", locks)
}

// redisLogger sends go-redis's own messages (such as failed dials while Redis is down) to
// slog, so stderr stays JSON lines.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}
