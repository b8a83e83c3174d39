package main

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
)

// Redis Sentinel: REDIS_SENTINEL_ADDRS names the sentinels (host:port, or redis:// and
// rediss:// URLs) and REDIS_SENTINEL_MASTER the master they watch, as their `sentinel monitor
// <name> ...` line names it. Together they replace REDIS_ADDR: the service asks the sentinels
// where the master is, and asks again after a failover (go-redis's failover client).
//
// Two sets of credentials, as the deployment has two kinds of servers: the master and its
// replicas take REDIS_USERNAME and REDIS_PASSWORD, like any data node; the sentinels take
// their URLs' credentials, or REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD (a sentinel's
// own requirepass). Nothing falls back from one to the other: a sentinel without a password
// refuses an AUTH. One TLS setting covers both, as go-redis dials both with one TLS
// configuration: rediss:// sentinels mean a TLS master too.

// sentinelSet is a Sentinel deployment as REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER
// name it; the zero value is none.
type sentinelSet struct {
	master    string      // REDIS_SENTINEL_MASTER
	sentinels []redisNode // REDIS_SENTINEL_ADDRS, with the sentinels' own credentials
	username  string      // the master's and replicas' (REDIS_USERNAME)
	password  string      // (REDIS_PASSWORD)
}

// on reports whether a Sentinel deployment is configured.
func (s sentinelSet) on() bool { return len(s.sentinels) > 0 }

// redisSettings are the Redis topology settings as given, before parsing.
type redisSettings struct {
	addr, cluster, redlock string // REDIS_ADDR, REDIS_CLUSTER_ADDRS, REDLOCK_ADDRS
	sentinels, master      string // REDIS_SENTINEL_ADDRS, REDIS_SENTINEL_MASTER
	user, password         string // REDIS_USERNAME, REDIS_PASSWORD
	sentinelUser           string // REDIS_SENTINEL_USERNAME
	sentinelPassword       string // REDIS_SENTINEL_PASSWORD
}

// parseSentinel fills cfg.redisSentinel from s's sentinel settings, which go together.
func (cfg *config) parseSentinel(s redisSettings) []error {
	switch {
	case s.sentinels == "" && s.master == "":
		return nil
	case s.master == "":
		return []error{errors.New("REDIS_SENTINEL_ADDRS is set but REDIS_SENTINEL_MASTER is empty: " +
			"give both (the master's name, as the sentinels' `sentinel monitor <name>` line has it) or neither")}
	case s.sentinels == "":
		return []error{errors.New("REDIS_SENTINEL_MASTER is set but REDIS_SENTINEL_ADDRS is empty: " +
			"give both (the sentinels' host:port, comma-separated) or neither")}
	case s.cluster != "":
		return []error{errors.New("REDIS_SENTINEL_ADDRS and REDIS_CLUSTER_ADDRS are both set: " +
			"a Redis Cluster fails over by itself; give one of them")}
	}
	var errs []error
	if strings.ContainsFunc(s.master, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		errs = append(errs, fmt.Errorf("REDIS_SENTINEL_MASTER %q: want a name without spaces", s.master))
	}
	nodes, err := parseRedisList("REDIS_SENTINEL_ADDRS", s.sentinels, s.sentinelUser, s.sentinelPassword)
	if err != nil {
		return append(errs, err)
	}
	for i, n := range nodes {
		if n.db != 0 {
			errs = append(errs, fmt.Errorf("REDIS_SENTINEL_ADDRS entry %d: a sentinel has no databases: give no /db", i+1))
		}
		if first := nodes[0]; n.username != first.username || n.password != first.password || n.tls != first.tls {
			errs = append(errs, fmt.Errorf("REDIS_SENTINEL_ADDRS entry %d: the sentinels take the user, password and scheme of entry 1", i+1))
		}
	}
	cfg.redisSentinel = sentinelSet{master: s.master, sentinels: nodes, username: s.user, password: s.password}
	return errs
}

// failoverOptions are the options of the failover client of s: the settings newRedisClient
// gives a single Redis (one retry, one dial, a 1 s dial timeout, context deadlines honoured),
// for the master the sentinels name.
func (s sentinelSet) failoverOptions() *redis.FailoverOptions {
	first := s.sentinels[0] // the sentinels share user, password and TLS (parseSentinel)
	return &redis.FailoverOptions{
		MasterName: s.master, SentinelAddrs: addrs(s.sentinels),
		SentinelUsername: first.username, SentinelPassword: first.password,
		Username: s.username, Password: s.password, TLSConfig: first.tlsConfig(),
		ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second,
	}
}

// String is the deployment as a log line shows it: the master's name and the sentinels,
// never credentials.
func (s sentinelSet) String() string {
	return "sentinel " + s.master + " " + joinNodes(s.sentinels)
}
