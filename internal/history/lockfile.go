package history

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Recorder takes lock operations; it must be cheap and safe for concurrent use.
type Recorder interface {
	Record(op LockOp)
}

// LockFile is a Recorder appending JSON lines to a file that processes may share. Safe for
// concurrent use.
type LockFile struct {
	f       *os.File
	process string

	mu  sync.Mutex
	err error // the first write that failed
}

// CreateLockFile opens or creates path for appending process's lock operations.
func CreateLockFile(path, process string) (*LockFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock history: %w", err)
	}
	return &LockFile{f: f, process: process}, nil
}

// Record appends op; Close returns the first failed write.
func (l *LockFile) Record(op LockOp) {
	if op.Process == "" {
		op.Process = l.process
	}
	line, err := json.Marshal(op)
	if err == nil {
		_, err = l.f.Write(append(line, '\n'))
	}
	if err != nil {
		l.mu.Lock()
		l.err = cmp.Or(l.err, err)
		l.mu.Unlock()
	}
}

// Close closes the file and returns the first failed write.
func (l *LockFile) Close() error {
	l.mu.Lock()
	werr := l.err
	l.mu.Unlock()
	if werr != nil {
		werr = fmt.Errorf("lock history %s: a write failed, the history is incomplete: %w", l.f.Name(), werr)
	}
	return errors.Join(werr, l.f.Close())
}

// ReadLockOps reads the LockFiles at paths, skipping a last line cut short.
func ReadLockOps(paths ...string) ([]LockOp, error) {
	var ops []LockOp
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("lock history: %w", err)
		}
		more, err := ReadLines[LockOp](f)
		f.Close()
		ops = append(ops, more...)
		if err != nil {
			return nil, fmt.Errorf("lock history %s: %w", path, err)
		}
	}
	return ops, nil
}

// OfKey returns the operations of ops on the lock key, in their order.
func OfKey(ops []LockOp, key string) []LockOp {
	var out []LockOp
	for _, op := range ops {
		if op.Key == key {
			out = append(out, op)
		}
	}
	return out
}
