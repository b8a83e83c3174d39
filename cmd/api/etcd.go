package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// Lock backends: LOCK_BACKEND=redis (the default) takes the dlock strategy's product locks
// in Redis (or with Redlock over REDLOCK_ADDRS); LOCK_BACKEND=etcd takes them in the etcd
// at ETCD_ENDPOINTS. Everything else (the redis strategy's gate, the sold-out channel, the
// rate limits, the lab's Redis locks) stays in Redis either way. ETCD_ENDPOINTS set with
// the Redis backend gives the oversell lab its etcd lock and nothing more, as
// ZOOKEEPER_SERVERS does its zookeeper locks.
// LOCK_BACKEND=zookeeper takes them in the ZooKeeper ensemble at ZOOKEEPER_SERVERS (see
// zookeeper.go).

const (
	backendRedis = "redis"
	backendEtcd  = "etcd"
	// backendZooKeeper's servers are in zookeeper.go.
	backendZooKeeper = "zookeeper"
)

// etcdConfig is the etcd part of the configuration.
type etcdConfig struct {
	endpoints []string // http:// or https:// URLs; empty: no etcd
	username  string   // ETCD_USERNAME; the password is ETCD_PASSWORD, which has no flag
	password  string
}

// parseLockBackend fills cfg.lockBackend and cfg.etcd from LOCK_BACKEND, ETCD_ENDPOINTS
// (explicit: whether the variable or flag was set at all), ETCD_USERNAME and ETCD_PASSWORD.
func (cfg *config) parseLockBackend(backend, endpoints string, explicit bool, user, password string) []error {
	var errs []error
	cfg.lockBackend = strings.ToLower(strings.TrimSpace(backend))
	switch cfg.lockBackend {
	case backendRedis:
	case backendEtcd, backendZooKeeper:
		if len(cfg.redlock) > 0 {
			errs = append(errs, fmt.Errorf("LOCK_BACKEND=%s and REDLOCK_ADDRS both name where the product locks live: set one", cfg.lockBackend))
		}
	default:
		errs = append(errs, fmt.Errorf("LOCK_BACKEND %q: want redis, etcd or zookeeper", backend))
	}
	if cfg.lockBackend != backendEtcd && !explicit {
		return errs
	}
	for i, e := range strings.Split(endpoints, ",") {
		u, err := parseEtcdEndpoint(strings.TrimSpace(e))
		if err != nil {
			errs = append(errs, fmt.Errorf("ETCD_ENDPOINTS, endpoint %d %q: %w", i+1, e, err))
			continue
		}
		cfg.etcd.endpoints = append(cfg.etcd.endpoints, u)
	}
	if eps := cfg.etcd.endpoints; len(eps) > 1 && slices.ContainsFunc(eps, func(u string) bool {
		return strings.HasPrefix(u, "https://") != strings.HasPrefix(eps[0], "https://")
	}) {
		errs = append(errs, fmt.Errorf("ETCD_ENDPOINTS: want all http:// or all https://, not both: one client speaks TLS to every member or to none"))
	}
	cfg.etcd.username, cfg.etcd.password = user, password
	if (user == "") != (password == "") {
		errs = append(errs, fmt.Errorf("ETCD_USERNAME and ETCD_PASSWORD: set both or neither"))
	}
	return errs
}

// parseEtcdEndpoint accepts host:port or an http:// or https:// URL with a host and a port
// and nothing else, and returns the URL.
func parseEtcdEndpoint(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("want host:port or an http:// or https:// URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" || u.Hostname() == "" {
		return "", fmt.Errorf("want a host and a port, such as 127.0.0.1:2379")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", fmt.Errorf("want only a scheme, a host and a port (credentials go in ETCD_USERNAME and ETCD_PASSWORD)")
	}
	return u.Scheme + "://" + u.Host, nil
}

// newEtcdClient returns a client of cfg's etcd, or nil when none is configured. It does not
// wait for etcd: an etcd that does not answer shows in /readyz and in the purchases' 503s.
func newEtcdClient(cfg etcdConfig) (*clientv3.Client, error) {
	if len(cfg.endpoints) == 0 {
		return nil, nil
	}
	c := clientv3.Config{
		Endpoints:            cfg.endpoints,
		DialTimeout:          5 * time.Second,
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		Username:             cfg.username,
		Password:             cfg.password,
		Logger:               zap.NewNop(), // its retries would flood the log during an outage
	}
	if strings.HasPrefix(cfg.endpoints[0], "https://") {
		c.TLS = &tls.Config{MinVersion: tls.VersionTLS12} // the system's roots
	}
	cli, err := clientv3.New(c)
	if err != nil {
		return nil, fmt.Errorf("etcd client of %v: %w", cfg.endpoints, err)
	}
	return cli, nil
}

// logLockBackend says where the product locks live.
func logLockBackend(log *slog.Logger, cfg config) {
	if cfg.lockBackend == backendZooKeeper {
		log.Info("product locks in zookeeper", "servers", cfg.zookeeper.Servers, "session_timeout", cfg.zookeeper.SessionTimeout.String())
	} else if len(cfg.zookeeper.Servers) > 0 {
		log.Info("zookeeper for the lab's zookeeper locks only", "servers", cfg.zookeeper.Servers)
	}
	if cfg.lockBackend == backendEtcd {
		log.Info("product locks in etcd", "endpoints", cfg.etcd.endpoints)
	} else if len(cfg.etcd.endpoints) > 0 {
		log.Info("etcd for the lab's etcd lock only", "endpoints", cfg.etcd.endpoints)
	}
}

// warnEtcdFences warns, when the product locks are in Redis, how many products were last
// written under etcd locks: their fences (order.EtcdFenceBase and up) are above every Redis
// fence, so their dlock purchases answer busy until the fences are reset.
func warnEtcdFences(ctx context.Context, cfg config, products *inventory.Store, log *slog.Logger) {
	if cfg.lockBackend != backendRedis {
		return
	}
	n, err := products.CountFencedFrom(ctx, order.EtcdFenceBase)
	if err != nil || n == 0 {
		return // a failed count is not worth a failed start
	}
	log.Warn("products last written under etcd locks: sold by an API on Redis locks, they answer busy until their fences are reset (with no API on etcd running); nothing to do if APIs on etcd sell them",
		"products", n, "reset", fmt.Sprintf("UPDATE products SET fence = 0 WHERE fence >= %d", order.EtcdFenceBase))
}
