package procs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a redis-server of the caller's own keeps on disk, and how its caller makes it come back older
// than it was: from an RDB snapshot taken earlier (Snapshot, then Stop and Start), or with
// the tail of its append-only file lost, as a power cut loses what appendfsync everysec had
// not synced yet (MarkAOF, Stop, CutAOF, Start).

// Snapshot runs BGSAVE and waits up to 10 s for it; a later Stop and Start loads it.
func (s *Redis) Snapshot() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.BgSave(ctx).Err(); err != nil {
		return fmt.Errorf("BGSAVE on %s: %w", s.Addr, err)
	}
	for {
		info, err := rdb.Info(ctx, "persistence").Result()
		if err == nil && strings.Contains(info, "rdb_bgsave_in_progress:0") {
			if !strings.Contains(info, "rdb_last_bgsave_status:ok") {
				return fmt.Errorf("BGSAVE on %s failed:\n%s\n%s", s.Addr, info, s.log.Tail(10))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("BGSAVE on %s not done within 10s: %v\n%s", s.Addr, err, info)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// AOFMark is how far a server's append-only file reached at one moment (MarkAOF).
type AOFMark struct {
	File string // the incremental AOF, in Dir/appendonlydir
	Size int64
}

// MarkAOF notes how far the append-only file reaches now; it fails unless there is exactly one
// incremental AOF file.
func (s *Redis) MarkAOF() (AOFMark, error) {
	file, err := s.incrAOF()
	if err != nil {
		return AOFMark{}, err
	}
	st, err := os.Stat(file)
	if err != nil {
		return AOFMark{}, err
	}
	return AOFMark{File: file, Size: st.Size()}, nil
}

// CutAOF truncates the stopped server's append-only file back to m, as a power cut would, and
// returns the bytes cut.
func (s *Redis) CutAOF(m AOFMark) (int64, error) {
	s.mu.Lock()
	running := s.proc != nil
	s.mu.Unlock()
	if running {
		return 0, fmt.Errorf("CutAOF on %s: the server runs; Stop it first", s.Addr)
	}
	file, err := s.incrAOF()
	if err != nil {
		return 0, err
	}
	if file != m.File {
		return 0, fmt.Errorf("CutAOF on %s: the AOF is %s now, not %s (rewritten since the mark)", s.Addr, file, m.File)
	}
	st, err := os.Stat(m.File)
	if err != nil {
		return 0, err
	}
	if err := os.Truncate(m.File, m.Size); err != nil {
		return 0, err
	}
	return st.Size() - m.Size, nil
}

// incrAOF is the path of the server's one incremental AOF file.
func (s *Redis) incrAOF() (string, error) {
	files, err := filepath.Glob(filepath.Join(s.Dir, "appendonlydir", "*.incr.aof"))
	if err != nil || len(files) != 1 {
		return "", fmt.Errorf("incremental AOF files of %s: %q, %v; want one (is it started with --appendonly yes?)", s.Addr, files, err)
	}
	return files[0], nil
}
