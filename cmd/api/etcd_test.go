package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestLockBackendConfig: LOCK_BACKEND and ETCD_ENDPOINTS are parsed, defaulted and refused
// with messages that name the setting.
func TestLockBackendConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		backend   string
		endpoints []string
		err       string // a part of the error; empty: none
	}{
		{"default: redis, no etcd", nil, "redis", nil, ""},
		{"etcd with the default endpoint", map[string]string{"LOCK_BACKEND": "etcd"}, "etcd", []string{"http://127.0.0.1:2379"}, ""},
		{"case and spaces", map[string]string{"LOCK_BACKEND": " ETCD "}, "etcd", []string{"http://127.0.0.1:2379"}, ""},
		{"a list, host:port and URLs", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": "a:1, http://b:2,http://c:3/"},
			"etcd", []string{"http://a:1", "http://b:2", "http://c:3"}, ""},
		{"endpoints with the redis backend: the lab's etcd lock", map[string]string{"ETCD_ENDPOINTS": "a:1"}, "redis", []string{"http://a:1"}, ""},
		{"unknown backend", map[string]string{"LOCK_BACKEND": "consul"}, "", nil, `LOCK_BACKEND "consul": want redis, etcd or zookeeper`},
		{"etcd and Redlock", map[string]string{"LOCK_BACKEND": "etcd", "REDLOCK_ADDRS": "a:1,b:2,c:3"}, "", nil, "LOCK_BACKEND=etcd and REDLOCK_ADDRS"},
		{"no port", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": "a"}, "", nil, `ETCD_ENDPOINTS, endpoint 1 "a": want a host and a port`},
		{"bad scheme", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": "a:1,redis://b:2"}, "", nil, `endpoint 2 "redis://b:2": scheme "redis"`},
		{"https", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": "https://a:1,https://b:2"}, "etcd", []string{"https://a:1", "https://b:2"}, ""},
		{"http and https mixed", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": "http://a:1,https://b:2"}, "", nil, "all http:// or all https://"},
		{"credentials in the URL", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": "http://u:p@a:1"}, "", nil, "ETCD_USERNAME and ETCD_PASSWORD"},
		{"user without password", map[string]string{"LOCK_BACKEND": "etcd", "ETCD_USERNAME": "u"}, "", nil, "set both or neither"},
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
			if err != nil || cfg.lockBackend != tt.backend || !slices.Equal(cfg.etcd.endpoints, tt.endpoints) {
				t.Fatalf("backend %q, endpoints %q, err %v; want %q, %q", cfg.lockBackend, cfg.etcd.endpoints, err, tt.backend, tt.endpoints)
			}
		})
	}
}

// TestLockBackendFlags: the flags override the variables, and the password is not echoed.
func TestLockBackendFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LOCK_BACKEND": "redis", "ETCD_PASSWORD": "etcd-s3cr3t"}
	cfg, err := parseConfig([]string{"-lock-backend", "etcd", "-etcd-endpoints", "x:9", "-etcd-username", "u"},
		lookup(env), io.Discard)
	if err != nil || cfg.lockBackend != "etcd" || !slices.Equal(cfg.etcd.endpoints, []string{"http://x:9"}) || cfg.etcd.password != "etcd-s3cr3t" {
		t.Fatalf("cfg %+v, err %v", cfg.etcd, err)
	}
	var out strings.Builder
	if _, err := parseConfig([]string{"-h"}, lookup(env), &out); err == nil || strings.Contains(out.String(), "s3cr3t") || !strings.Contains(out.String(), "-lock-backend") {
		t.Fatalf("usage: %v\n%s", err, out.String())
	}
}

// TestWarnEtcdFences: an API starting on Redis locks says which products carry etcd fences,
// and how to reset them; on etcd locks, or with none, it says nothing.
func TestWarnEtcdFences(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	products := inventory.NewStore(gdb)
	ctx := context.Background()
	p, err := products.Create(ctx, inventory.NewProduct{Name: "p", Stock: 1, Strategy: inventory.StrategyDlock})
	if err != nil {
		t.Fatal(err)
	}
	warned := func(backend string) string {
		var out strings.Builder
		warnEtcdFences(ctx, config{lockBackend: backend}, products, newLogger(&out, slog.LevelInfo))
		return out.String()
	}
	if got := warned(backendRedis); got != "" {
		t.Errorf("no product under etcd fences, yet: %s", got)
	}
	if err := gdb.Exec("UPDATE products SET fence = ? WHERE id = ?", order.EtcdFenceBase+7, p.ID).Error; err != nil {
		t.Fatal(err)
	}
	if got := warned(backendRedis); !strings.Contains(got, `"products":1`) || !strings.Contains(got, "UPDATE products SET fence = 0") {
		t.Errorf("the warning = %q, want the count and the reset", got)
	}
	if got := warned(backendEtcd); got != "" {
		t.Errorf("on etcd locks: %s", got)
	}
}
