package procs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// StartRedisCluster starts an n-master Redis Cluster and waits until it is ok; the caller closes
// each server.
func StartRedisCluster(n int) (_ []*Redis, err error) {
	servers := make([]*Redis, 0, n)
	defer func() {
		if err != nil {
			for _, s := range servers {
				err = errors.Join(err, s.Close())
			}
		}
	}()
	for range n {
		s, err := StartRedis("--cluster-enabled", "yes", "--cluster-node-timeout", "5000")
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, s := range servers {
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := s.do(ctx, 0, "CLUSTER", "ADDSLOTSRANGE", lo, hi); err != nil {
			return nil, err
		}
	}
	for _, s := range servers[1:] {
		_, port, _ := net.SplitHostPort(s.Addr)
		if err := servers[0].do(ctx, 0, "CLUSTER", "MEET", "127.0.0.1", port, s.Bus); err != nil {
			return nil, err
		}
	}
	for _, s := range servers {
		if err := waitClusterOK(ctx, s, n); err != nil {
			return nil, err
		}
	}
	return servers, nil
}

// waitClusterOK waits until s sees n masters and reports cluster_state:ok.
func waitClusterOK(ctx context.Context, s *Redis, n int) error {
	rdb := s.Client()
	defer rdb.Close()
	want := []string{"cluster_state:ok", "cluster_known_nodes:" + strconv.Itoa(n)}
	for {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, want[0]) && strings.Contains(info, want[1]) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster node %s not ok: %v\n%s", s.Addr, err, info)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
