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

// Snapshot makes the server write an RDB snapshot of its data as it is now, the way its
// `save` points would (BGSAVE: a fork, so the server goes on answering meanwhile), and waits
// (10 s at most) until the snapshot is written. A Start after a Stop then loads it: whatever
// was written after the BGSAVE is gone, and what was deleted or expired since is back. The
// server needs no --save of its own (StartRedis turns it off): nothing else writes a
// snapshot.
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

// MarkAOF notes how far the server's append-only file (--appendonly yes) reaches now. With
// appendfsync everysec, that is what a power cut would keep if the fsync due next never
// happened: CutAOF then loses what was appended after the mark. It returns an error unless
// the server has exactly one incremental AOF file (Redis 7's multi-part AOF, before any
// rewrite).
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

// CutAOF truncates the append-only file of the stopped server back to m and returns how many
// bytes it cut: the commands a power cut loses with appendfsync everysec when the fsync after
// m never came. (A process crash alone loses nothing: the kernel keeps what Redis wrote.) A
// command cut in two at the mark is dropped when the server loads the file
// (aof-load-truncated, on by default).
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
