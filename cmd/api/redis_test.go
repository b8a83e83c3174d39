package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestRedisTopologyConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		env              map[string]string
		cluster, redlock []string
		err              string
	}{
		{"single", map[string]string{"REDIS_ADDR": "10.0.0.1:6379"}, nil, nil, ""},
		{"REDIS_ADDR list", map[string]string{"REDIS_ADDR": "a:1, b:2,c:3"}, []string{"a:1", "b:2", "c:3"}, nil, ""},
		{"REDIS_CLUSTER_ADDRS wins", map[string]string{"REDIS_ADDR": "x:1", "REDIS_CLUSTER_ADDRS": "a:1"}, []string{"a:1"}, nil, ""},
		{"redlock", map[string]string{"REDLOCK_ADDRS": "a:1,b:2,c:3"}, nil, []string{"a:1", "b:2", "c:3"}, ""},
		{"redlock too few", map[string]string{"REDLOCK_ADDRS": "a:1,b:2"}, nil, nil, "REDLOCK_ADDRS"},
		{"bad cluster address", map[string]string{"REDIS_CLUSTER_ADDRS": "a:1,nope"}, nil, nil, "REDIS_CLUSTER_ADDRS"},
		{"bad redlock address", map[string]string{"REDLOCK_ADDRS": "a:1,b:2,c:"}, nil, nil, "REDLOCK_ADDRS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseEnv(tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cluster, redlock := addrs(cfg.redisCluster), addrs(cfg.redlock)
			if !slices.Equal(cluster, tt.cluster) || !slices.Equal(redlock, tt.redlock) {
				t.Fatalf("cluster %q, redlock %q; want %q, %q", cluster, redlock, tt.cluster, tt.redlock)
			}
		})
	}
}

func TestRedisTopologyFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-redis-cluster-addrs", "a:1,b:2", "-redlock-addrs", "c:1,d:2,e:3"},
		lookup(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.redisCluster) != 2 || len(cfg.redlock) != 3 {
		t.Fatalf("cluster %v, redlock %v", cfg.redisCluster, cfg.redlock)
	}
}
