package servers_test

import (
	"context"
	"testing"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisSnapshot: a server killed after a snapshot comes back as the snapshot was:
// what was written after it is gone, what was deleted after it is back.
func TestRedisSnapshot(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	s := servers.StartRedis(t)
	s.Do(t, 0, "SET", "a", "before")
	s.Do(t, 0, "SET", "gone", "before")
	s.Snapshot(t)
	s.Do(t, 0, "SET", "a", "after")
	s.Do(t, 0, "SET", "b", "after")
	s.Do(t, 0, "DEL", "gone")
	s.Stop()
	s.Start()
	assertKeys(t, s, map[string]string{"a": "before", "b": "", "gone": "before"})
}

// TestRedisAOFCut: with appendfsync everysec a killed server loses nothing (the kernel keeps
// what it wrote); with its AOF cut back to a mark, it loses what was appended after the mark,
// as a power cut before the next fsync would.
func TestRedisAOFCut(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	s := servers.StartRedis(t, "--appendonly", "yes", "--appendfsync", "everysec")
	s.Do(t, 0, "SET", "x", "before")
	s.Do(t, 0, "SET", "x", "after")
	s.Do(t, 0, "SET", "y", "after")
	s.Stop()
	s.Start()
	assertKeys(t, s, map[string]string{"x": "after", "y": "after"})

	mark := s.MarkAOF(t)
	s.Do(t, 0, "SET", "x", "lost")
	s.Do(t, 0, "DEL", "y")
	s.Stop()
	if cut := s.CutAOF(t, mark); cut <= 0 {
		t.Fatalf("CutAOF cut %d bytes, want the two commands after the mark", cut)
	}
	s.Start()
	assertKeys(t, s, map[string]string{"x": "after", "y": "after"})
}

// assertKeys checks the string value of each key ("": missing).
func assertKeys(t *testing.T, s *servers.Redis, want map[string]string) {
	t.Helper()
	rdb := s.Client()
	for k, v := range want {
		if got := rdb.Get(context.Background(), k).Val(); got != v {
			t.Errorf("%s = %q after the restart, want %q", k, got, v)
		}
	}
}
