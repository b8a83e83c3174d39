package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisSentinelConfig: REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER make a failover
// client, whatever REDIS_ADDR says; the master takes REDIS_USERNAME and REDIS_PASSWORD, the
// sentinels their URLs' credentials or REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD;
// rediss:// sentinels mean TLS to both; the client keeps cmd/api's retry and dial settings.
func TestRedisSentinelConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want redis.FailoverOptions // the fields compared: see below
	}{
		{"host:port list overrides REDIS_ADDR", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1, b:2,c:3", "REDIS_SENTINEL_MASTER": "mymaster",
			"REDIS_ADDR": "not an address"},
			redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{"a:1", "b:2", "c:3"}}},
		{"master credentials from REDIS_USERNAME and REDIS_PASSWORD", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1", "REDIS_SENTINEL_MASTER": "m",
			"REDIS_USERNAME": "app", "REDIS_PASSWORD": "data-pw"},
			redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"a:1"}, Username: "app", Password: "data-pw"}},
		{"sentinel credentials from their variables", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1,b:2", "REDIS_SENTINEL_MASTER": "m",
			"REDIS_PASSWORD": "data-pw", "REDIS_SENTINEL_USERNAME": "watcher", "REDIS_SENTINEL_PASSWORD": "sentinel-pw"},
			redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"a:1", "b:2"}, Password: "data-pw",
				SentinelUsername: "watcher", SentinelPassword: "sentinel-pw"}},
		{"sentinel URLs' credentials win", map[string]string{"REDIS_SENTINEL_ADDRS": "redis://w:url-pw@a:1,redis://w:url-pw@b:2",
			"REDIS_SENTINEL_MASTER": "m", "REDIS_SENTINEL_PASSWORD": "env-pw"},
			redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"a:1", "b:2"}, SentinelUsername: "w", SentinelPassword: "url-pw"}},
		{"rediss sentinels: TLS", map[string]string{"REDIS_SENTINEL_ADDRS": "rediss://a:1,rediss://b:2", "REDIS_SENTINEL_MASTER": "m"},
			redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"a:1", "b:2"}, TLSConfig: (redisNode{tls: true}).tlsConfig()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustParseEnv(t, tt.env)
			if cfg.redis != (redisNode{}) || cfg.redisCluster != nil {
				t.Fatalf("redis %+v, cluster %+v: REDIS_ADDR was used", cfg.redis, cfg.redisCluster)
			}
			got, w := cfg.redisSentinel.failoverOptions(), tt.want
			if got.MasterName != w.MasterName || !slices.Equal(got.SentinelAddrs, w.SentinelAddrs) ||
				got.Username != w.Username || got.Password != w.Password ||
				got.SentinelUsername != w.SentinelUsername || got.SentinelPassword != w.SentinelPassword ||
				(got.TLSConfig != nil) != (w.TLSConfig != nil) {
				t.Fatalf("failover options %+v, want %+v", got, w)
			}
			client := newRedisClient(cfg)
			defer client.Close()
			rdb, ok := client.(*redis.Client)
			if !ok {
				t.Fatalf("client is a %T, want go-redis's failover client (a *redis.Client)", client)
			}
			o := rdb.Options()
			if o.Username != w.Username || o.Password != w.Password || (o.TLSConfig != nil) != (w.TLSConfig != nil) ||
				!o.ContextTimeoutEnabled || o.MaxRetries != 1 || o.DialerRetries != 1 {
				t.Fatalf("client options %+v lost the master's credentials or cmd/api's settings", o)
			}
		})
	}
}

// TestRedisSentinelErrors: the two settings go together, do not mix with a cluster, and each
// sentinel address is checked; no error holds a password ("s3cr3t").
func TestRedisSentinelErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"addresses without a master", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1"}, "REDIS_SENTINEL_ADDRS is set but REDIS_SENTINEL_MASTER is empty"},
		{"a master without addresses", map[string]string{"REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINEL_MASTER is set but REDIS_SENTINEL_ADDRS is empty"},
		{"with a cluster", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1", "REDIS_SENTINEL_MASTER": "m", "REDIS_CLUSTER_ADDRS": "b:1"},
			"REDIS_SENTINEL_ADDRS and REDIS_CLUSTER_ADDRS are both set"},
		{"bad address", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1,redis://u:s3cr3t-1@b:x", "REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINEL_ADDRS entry 2"},
		{"no port", map[string]string{"REDIS_SENTINEL_ADDRS": "a", "REDIS_SENTINEL_MASTER": "m"}, `REDIS_SENTINEL_ADDRS entry 1 "a"`},
		{"a database", map[string]string{"REDIS_SENTINEL_ADDRS": "redis://:s3cr3t-2@a:1/2", "REDIS_SENTINEL_MASTER": "m"}, "a sentinel has no databases"},
		{"mixed passwords", map[string]string{"REDIS_SENTINEL_ADDRS": "redis://:s3cr3t-3a@a:1,redis://:s3cr3t-3b@b:1", "REDIS_SENTINEL_MASTER": "m"},
			"REDIS_SENTINEL_ADDRS entry 2: the sentinels take the user, password and scheme of entry 1"},
		{"mixed schemes", map[string]string{"REDIS_SENTINEL_ADDRS": "rediss://a:1,b:2", "REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINEL_ADDRS entry 2"},
		{"a master name with a space", map[string]string{"REDIS_SENTINEL_ADDRS": "a:1", "REDIS_SENTINEL_MASTER": "my master"}, "REDIS_SENTINEL_MASTER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseEnv(tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("the error holds a password: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestRedisSentinelFlags: each flag overrides its variable.
func TestRedisSentinelFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REDIS_SENTINEL_ADDRS": "env:1", "REDIS_SENTINEL_MASTER": "env-master", "REDIS_SENTINEL_USERNAME": "env-user"}
	cfg, err := parseConfig([]string{"-redis-sentinel-addrs", "a:1,b:2", "-redis-sentinel-master", "flag-master",
		"-redis-sentinel-username", "flag-user"}, lookup(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.redisSentinel.failoverOptions()
	if o.MasterName != "flag-master" || !slices.Equal(o.SentinelAddrs, []string{"a:1", "b:2"}) || o.SentinelUsername != "flag-user" {
		t.Fatalf("failover options %+v, want the flags' values", o)
	}
	if _, err := parseConfig([]string{"-redis-sentinel-password", "x"}, lookup(nil), io.Discard); err == nil {
		t.Fatal("-redis-sentinel-password was accepted; a password belongs in the environment, not in ps")
	}
}

// TestRedisSentinelLogHasNoCredentials: the start-up line names the master and the
// sentinels, never a user or password.
func TestRedisSentinelLogHasNoCredentials(t *testing.T) {
	t.Parallel()
	cfg := mustParseEnv(t, map[string]string{"REDIS_SENTINEL_ADDRS": "redis://user-x:pw-in-url@a:1,redis://user-x:pw-in-url@b:2",
		"REDIS_SENTINEL_MASTER": "m", "REDIS_PASSWORD": "pw-from-env"})
	var buf bytes.Buffer
	logRedisTopology(slog.New(slog.NewJSONHandler(&buf, nil)), cfg)
	line := buf.String()
	if !strings.Contains(line, "sentinel m a:1,b:2") {
		t.Errorf("the log line misses the deployment: %s", line)
	}
	for _, secret := range []string{"pw-in-url", "pw-from-env", "user-x"} {
		if strings.Contains(line, secret) {
			t.Errorf("the log line holds %q: %s", secret, line)
		}
	}
}

// TestRedisSentinel runs the API on a Sentinel deployment of its own (servers.StartSentinels)
// whose servers and sentinels each require a password: with both passwords it is ready and
// sells; with the data password given to the sentinels as well, or without the sentinels'
// password, /readyz says Redis is down. No password appears in the log or an answer.
func TestRedisSentinel(t *testing.T) {
	testenv.SkipShort(t, "a Sentinel deployment of its own")
	t.Parallel()
	const dataPw, sentinelPw = "data-pw-s3cr3t-a", "sentinel-pw-s3cr3t-b"
	d := servers.StartSentinels(t, &servers.SentinelOptions{Password: dataPw, SentinelPassword: sentinelPw})
	dsn := testenv.Schema(t)
	sentinels := strings.Join(d.Addrs(), ",")
	tests := []struct {
		name  string
		env   map[string]string
		ready bool
	}{
		{"both passwords", map[string]string{"REDIS_PASSWORD": dataPw, "REDIS_SENTINEL_PASSWORD": sentinelPw}, true},
		{"the sentinels' password in their URLs", map[string]string{"REDIS_PASSWORD": dataPw,
			"REDIS_SENTINEL_ADDRS": "redis://:" + sentinelPw + "@" + strings.Join(d.Addrs(), ",redis://:"+sentinelPw+"@")}, true},
		{"no sentinel password", map[string]string{"REDIS_PASSWORD": dataPw}, false},
		{"the data password for the sentinels", map[string]string{"REDIS_PASSWORD": dataPw, "REDIS_SENTINEL_PASSWORD": dataPw}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"DATABASE_URL": dsn, "ADMIN_TOKEN": authToken, "LOG_LEVEL": "debug",
				"REDIS_KEY_PREFIX": testenv.Name("sentinel"), "REDIS_SENTINEL_ADDRS": sentinels, "REDIS_SENTINEL_MASTER": d.Name,
				"REDIS_ADDR": "127.0.0.1:1"} // overridden: nothing listens there
			for k, v := range tt.env {
				env[k] = v
			}
			api := startAPI(t, env)
			status, answers := readyz(t, api.base, tt.ready)
			switch {
			case !tt.ready && (status != http.StatusServiceUnavailable || !strings.Contains(answers, `"redis"`)):
				t.Fatalf("GET /readyz = %d %s, want 503 naming redis", status, answers)
			case tt.ready && status != http.StatusOK:
				t.Fatalf("GET /readyz = %d %s, want 200", status, answers)
			case tt.ready:
				for _, strategy := range []string{"redis", "dlock"} {
					answers += buyOnce(t, api.base, strategy)
				}
			}
			logs := api.stop()
			if !strings.Contains(logs, `"redis":"sentinel seckill `) {
				t.Fatalf("the log misses the topology line, so the test proves nothing:\n%s", logs)
			}
			if strings.Contains(logs, "s3cr3t") || strings.Contains(answers, "s3cr3t") {
				t.Fatalf("a password leaked; answers %s\nlog:\n%s", answers, logs)
			}
		})
	}
}
