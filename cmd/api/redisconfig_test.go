package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestRedisAddressForms: host:port and redis:// or rediss:// URLs, alone or in a cluster list,
// parse to the options the clients get, and REDIS_USERNAME and REDIS_PASSWORD apply where a URL
// names no credentials.
func TestRedisAddressForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    redisNode   // REDIS_ADDR of one node
		cluster []redisNode // else the cluster's nodes
	}{
		{name: "host:port", env: map[string]string{"REDIS_ADDR": "10.0.0.1:6379"},
			want: redisNode{addr: "10.0.0.1:6379"}},
		{name: "REDIS_PASSWORD", env: map[string]string{"REDIS_ADDR": "10.0.0.1:6379", "REDIS_PASSWORD": "env-pw"},
			want: redisNode{addr: "10.0.0.1:6379", password: "env-pw"}},
		{name: "REDIS_USERNAME", env: map[string]string{"REDIS_ADDR": "10.0.0.1:6379", "REDIS_USERNAME": "alice", "REDIS_PASSWORD": "env-pw"},
			want: redisNode{addr: "10.0.0.1:6379", username: "alice", password: "env-pw"}},
		{name: "redis URL with db", env: map[string]string{"REDIS_ADDR": "redis://10.0.0.1:6380/2", "REDIS_PASSWORD": "env-pw"},
			want: redisNode{addr: "10.0.0.1:6380", password: "env-pw", db: 2}},
		{name: "rediss URL", env: map[string]string{"REDIS_ADDR": "rediss://cache.example.com:6380"},
			want: redisNode{addr: "cache.example.com:6380", tls: true}},
		{name: "default port", env: map[string]string{"REDIS_ADDR": "redis://cache.example.com"},
			want: redisNode{addr: "cache.example.com:6379"}},
		{name: "IPv6", env: map[string]string{"REDIS_ADDR": "redis://[::1]:6379"},
			want: redisNode{addr: "[::1]:6379"}},
		{name: "URL credentials win", env: map[string]string{"REDIS_ADDR": "rediss://bob:url-pw@h:1/3",
			"REDIS_USERNAME": "alice", "REDIS_PASSWORD": "env-pw"},
			want: redisNode{addr: "h:1", username: "bob", password: "url-pw", db: 3, tls: true}},
		{name: "URL password alone wins over both", env: map[string]string{"REDIS_ADDR": "redis://:url-pw@h:1",
			"REDIS_USERNAME": "alice", "REDIS_PASSWORD": "env-pw"},
			want: redisNode{addr: "h:1", password: "url-pw"}},
		{name: "percent-encoded password", env: map[string]string{"REDIS_ADDR": "redis://u:p%40ss%2Cw%3A@h:1"},
			want: redisNode{addr: "h:1", username: "u", password: "p@ss,w:"}},
		{name: "a comma in a URL's password is no cluster", env: map[string]string{"REDIS_ADDR": "redis://u:a,b@h:1"},
			want: redisNode{addr: "h:1", username: "u", password: "a,b"}},
		{name: "REDIS_CLUSTER_ADDRS of rediss URLs", env: map[string]string{"REDIS_CLUSTER_ADDRS": "rediss://u:pw@a:1, rediss://u:pw@b:2"},
			cluster: []redisNode{{addr: "a:1", username: "u", password: "pw", tls: true}, {addr: "b:2", username: "u", password: "pw", tls: true}}},
		{name: "REDIS_ADDR list of URLs", env: map[string]string{"REDIS_ADDR": "redis://a:1,redis://b:2", "REDIS_PASSWORD": "env-pw"},
			cluster: []redisNode{{addr: "a:1", password: "env-pw"}, {addr: "b:2", password: "env-pw"}}},
		{name: "host:port list with REDIS_PASSWORD", env: map[string]string{"REDIS_CLUSTER_ADDRS": "a:1,b:2", "REDIS_PASSWORD": "env-pw"},
			cluster: []redisNode{{addr: "a:1", password: "env-pw"}, {addr: "b:2", password: "env-pw"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustParseEnv(t, tt.env)
			if cfg.redis != tt.want || !slices.Equal(cfg.redisCluster, tt.cluster) {
				t.Fatalf("redis %+v, cluster %+v; want %+v, cluster %+v", cfg.redis, cfg.redisCluster, tt.want, tt.cluster)
			}
			client := newRedisClient(cfg)
			defer client.Close()
			nodes := tt.cluster
			if nodes == nil {
				nodes = []redisNode{tt.want}
			}
			w := nodes[0] // a cluster's nodes share credentials and TLS
			want := clientSettings{cluster: tt.cluster != nil, addrs: addrs(nodes), username: w.username,
				password: w.password, db: w.db, tls: w.tls, contextTimeout: true, maxRetries: 1, dialerRetries: 1}
			if got := settingsOf(client); !reflect.DeepEqual(got, want) {
				t.Fatalf("client settings %+v, want %+v: they do not match the address or lost cmd/api's settings", got, want)
			}
		})
	}
}

// clientSettings are the options cmd/api gives a Redis client, single or cluster.
type clientSettings struct {
	cluster                   bool
	addrs                     []string
	username, password        string
	db                        int
	tls, contextTimeout       bool
	maxRetries, dialerRetries int
}

// settingsOf reads the clientSettings back from the options of client, a *redis.Client or
// a *redis.ClusterClient.
func settingsOf(client redis.UniversalClient) clientSettings {
	switch c := client.(type) {
	case *redis.Client:
		o := c.Options()
		return clientSettings{addrs: []string{o.Addr}, username: o.Username, password: o.Password, db: o.DB,
			tls: o.TLSConfig != nil, contextTimeout: o.ContextTimeoutEnabled, maxRetries: o.MaxRetries, dialerRetries: o.DialerRetries}
	case *redis.ClusterClient:
		o := c.Options()
		return clientSettings{cluster: true, addrs: o.Addrs, username: o.Username, password: o.Password,
			tls: o.TLSConfig != nil, contextTimeout: o.ContextTimeoutEnabled, maxRetries: o.MaxRetries, dialerRetries: o.DialerRetries}
	}
	panic(fmt.Sprintf("settingsOf: a %T", client))
}

// TestRedlockNodeCredentials: each Redlock node takes the credentials of its own URL, or
// REDIS_USERNAME and REDIS_PASSWORD, and keeps the node timeouts.
func TestRedlockNodeCredentials(t *testing.T) {
	t.Parallel()
	cfg := mustParseEnv(t, map[string]string{"REDLOCK_ADDRS": "redis://:p1@a:1,rediss://u2:p2@b:2/1,c:3",
		"REDIS_USERNAME": "env-user", "REDIS_PASSWORD": "env-pw"})
	want := []redisNode{{addr: "a:1", password: "p1"}, {addr: "b:2", username: "u2", password: "p2", db: 1, tls: true},
		{addr: "c:3", username: "env-user", password: "env-pw"}}
	if !slices.Equal(cfg.redlock, want) {
		t.Fatalf("redlock %+v, want %+v", cfg.redlock, want)
	}
	nodes := newLockNodes(cfg)
	defer closeAll(nodes)
	for i, n := range nodes {
		opt, w := n.(*redis.Client).Options(), want[i]
		// MaxRetries: cmd/api sets -1 (no retries), which go-redis keeps as 0.
		if opt.Addr != w.addr || opt.Username != w.username || opt.Password != w.password || opt.DB != w.db ||
			(opt.TLSConfig != nil) != w.tls || opt.ReadTimeout != redlockNodeTimeout || opt.MaxRetries != 0 {
			t.Fatalf("node %d options %+v do not match %+v or lost the node timeouts", i, opt, w)
		}
	}
}

// TestRedisFlags: -redis-username overrides REDIS_USERNAME; the password has no flag.
func TestRedisFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REDIS_USERNAME": "env-user", "REDIS_PASSWORD": "env-pw"}
	cfg, err := parseConfig([]string{"-redis-username", "flag-user", "-redis-addr", "redis://h:1/4"},
		lookup(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (redisNode{addr: "h:1", username: "flag-user", password: "env-pw", db: 4}); cfg.redis != want {
		t.Fatalf("redis %+v, want %+v", cfg.redis, want)
	}
	if _, err := parseConfig([]string{"-redis-password", "x"}, lookup(nil), io.Discard); err == nil {
		t.Fatal("-redis-password was accepted; a password belongs in the environment, not in ps")
	}
}

// TestRedisTopologyLogHasNoCredentials: the start-up line names hosts and ports only.
func TestRedisTopologyLogHasNoCredentials(t *testing.T) {
	t.Parallel()
	cfg := mustParseEnv(t, map[string]string{"REDIS_ADDR": "rediss://user-x:pw-in-url@h:1/2",
		"REDLOCK_ADDRS": "redis://:pw-of-node@a:1,b:2,c:3", "REDIS_PASSWORD": "pw-from-env"})
	var buf bytes.Buffer
	logRedisTopology(slog.New(slog.NewJSONHandler(&buf, nil)), cfg)
	line := buf.String()
	for _, want := range []string{"single rediss://h:1/2", "redlock a:1,b:2,c:3"} {
		if !strings.Contains(line, want) {
			t.Errorf("the log line misses %q: %s", want, line)
		}
	}
	for _, secret := range []string{"pw-in-url", "pw-of-node", "pw-from-env", "user-x"} {
		if strings.Contains(line, secret) {
			t.Errorf("the log line holds %q: %s", secret, line)
		}
	}
}

// TestRedisAddressErrors: a bad address stops the program with an error naming its setting
// and holding no password, however the URL is broken. Every password here contains "s3cr3t".
func TestRedisAddressErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string // the setting the error names
	}{
		{"bad port", map[string]string{"REDIS_ADDR": "redis://u:s3cr3t-1@h:notaport"}, "REDIS_ADDR"},
		{"space in the password", map[string]string{"REDIS_ADDR": "redis://u:s3cr3t 2@h:1"}, "REDIS_ADDR"},
		{"unescaped slash in the password", map[string]string{"REDIS_ADDR": "redis://u:12/s3cr3t-3@h"}, "REDIS_ADDR"},
		{"unescaped hash in the password", map[string]string{"REDIS_ADDR": "redis://u:a#s3cr3t-4@h:1"}, "REDIS_ADDR"},
		{"bad escape in the password", map[string]string{"REDIS_ADDR": "redis://u:%zzs3cr3t-5@h:1"}, "REDIS_ADDR"},
		{"bad db", map[string]string{"REDIS_ADDR": "redis://u:s3cr3t-6@h:1/notadb"}, "REDIS_ADDR"},
		{"URL options", map[string]string{"REDIS_ADDR": "redis://u:s3cr3t-7@h:1?dial_timeout=1"}, "REDIS_ADDR"},
		{"other scheme", map[string]string{"REDIS_ADDR": "http://u:s3cr3t-8@h:1"}, "REDIS_ADDR"},
		{"unix socket", map[string]string{"REDIS_ADDR": "unix://u:s3cr3t-9@/run/redis.sock"}, "REDIS_ADDR"},
		{"credentials without a scheme", map[string]string{"REDIS_ADDR": "u:s3cr3t-10@h:1"}, "REDIS_ADDR"},
		{"bad REDIS_ADDR with REDIS_PASSWORD", map[string]string{"REDIS_ADDR": "h", "REDIS_PASSWORD": "s3cr3t-11"}, "REDIS_ADDR"},
		{"cluster list, one bad", map[string]string{"REDIS_ADDR": "redis://u:s3cr3t-12@a:1,redis://u:s3cr3t-12@b:x"}, "REDIS_ADDR"},
		{"cluster mixes TLS and plain", map[string]string{"REDIS_CLUSTER_ADDRS": "rediss://u:s3cr3t-13@a:1,b:2"}, "REDIS_CLUSTER_ADDRS"},
		{"cluster mixes passwords", map[string]string{"REDIS_CLUSTER_ADDRS": "redis://:s3cr3t-14a@a:1,redis://:s3cr3t-14b@b:2"}, "REDIS_CLUSTER_ADDRS"},
		{"cluster db", map[string]string{"REDIS_CLUSTER_ADDRS": "redis://:s3cr3t-15@a:1/1"}, "REDIS_CLUSTER_ADDRS"},
		{"redlock too few", map[string]string{"REDLOCK_ADDRS": "redis://:s3cr3t-16@a:1,redis://:s3cr3t-16@b:2"}, "REDLOCK_ADDRS"},
		{"redlock bad node", map[string]string{"REDLOCK_ADDRS": "a:1,b:2,redis://u:s3cr3t-17@c:x"}, "REDLOCK_ADDRS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseEnv(tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("the error holds a password: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestRedisAddressErrorShowsWhatHoldsNoPassword: an address without credentials is quoted,
// with what is wrong with it.
func TestRedisAddressErrorShowsWhatHoldsNoPassword(t *testing.T) {
	t.Parallel()
	_, err := parseEnv(map[string]string{"REDIS_CLUSTER_ADDRS": "a:1,redis://b:port"})
	if err == nil || !strings.Contains(err.Error(), `REDIS_CLUSTER_ADDRS entry 2 "redis://b:port"`) ||
		!strings.Contains(err.Error(), "port") {
		t.Fatalf("err = %v, want one quoting entry 2 and its bad port", err)
	}
}
