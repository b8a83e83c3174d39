package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// parseZooKeeper fills cfg.zookeeper.Servers from ZOOKEEPER_SERVERS when LOCK_BACKEND is
// zookeeper, or when the servers were given (explicit) for the oversell lab's zookeeper locks
// alone (its session timeout is parsed with the other durations), and checks both.
func (cfg *config) parseZooKeeper(servers string, explicit bool) []error {
	var errs []error
	if cfg.zookeeper.SessionTimeout < 0 {
		errs = append(errs, fmt.Errorf("ZOOKEEPER_SESSION_TIMEOUT %v: want 0s (LOCK_TTL) or more", cfg.zookeeper.SessionTimeout))
	}
	if cfg.lockBackend != backendZooKeeper && !explicit {
		return errs
	}
	for i, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		host, port, err := net.SplitHostPort(s)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			errs = append(errs, fmt.Errorf("ZOOKEEPER_SERVERS, member %d %q: want host:port, such as 127.0.0.1:2181", i+1, s))
			continue
		}
		cfg.zookeeper.Servers = append(cfg.zookeeper.Servers, s)
	}
	return errs
}
