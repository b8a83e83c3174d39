package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestZooKeeperConfig: LOCK_BACKEND=zookeeper with ZOOKEEPER_SERVERS and
// ZOOKEEPER_SESSION_TIMEOUT are parsed, defaulted and refused with messages that name the
// setting; with another backend the servers are parsed only when given (the lab's zookeeper
// locks use them; the product locks stay in Redis: serve.go's LocksInZooKeeper).
func TestZooKeeperConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		servers []string
		timeout time.Duration
		err     string // a part of the error; empty: none
	}{
		{"the default member", map[string]string{"LOCK_BACKEND": "zookeeper"}, []string{"127.0.0.1:2181"}, 0, ""},
		{"a list and a timeout", map[string]string{"LOCK_BACKEND": "ZooKeeper", "ZOOKEEPER_SERVERS": "a:1, b:2,c:3", "ZOOKEEPER_SESSION_TIMEOUT": "4s"},
			[]string{"a:1", "b:2", "c:3"}, 4 * time.Second, ""},
		{"redis backend: none by default", map[string]string{}, nil, 0, ""},
		{"redis backend: the lab's servers", map[string]string{"ZOOKEEPER_SERVERS": "a:1"}, []string{"a:1"}, 0, ""},
		{"no port", map[string]string{"LOCK_BACKEND": "zookeeper", "ZOOKEEPER_SERVERS": "a:1,b"}, nil, 0, `ZOOKEEPER_SERVERS, member 2 "b": want host:port`},
		{"a URL", map[string]string{"LOCK_BACKEND": "zookeeper", "ZOOKEEPER_SERVERS": "zk://a:1"}, nil, 0, `member 1 "zk://a:1"`},
		{"negative timeout", map[string]string{"LOCK_BACKEND": "zookeeper", "ZOOKEEPER_SESSION_TIMEOUT": "-1s"}, nil, 0, "ZOOKEEPER_SESSION_TIMEOUT -1s"},
		{"zookeeper and Redlock", map[string]string{"LOCK_BACKEND": "zookeeper", "REDLOCK_ADDRS": "a:1,b:2,c:3"}, nil, 0, "LOCK_BACKEND=zookeeper and REDLOCK_ADDRS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parseEnv(tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(cfg.zookeeper.Servers, tt.servers) || cfg.zookeeper.SessionTimeout != tt.timeout {
				t.Fatalf("servers %q, timeout %v, err %v; want %q, %v", cfg.zookeeper.Servers, cfg.zookeeper.SessionTimeout, err, tt.servers, tt.timeout)
			}
		})
	}
}
