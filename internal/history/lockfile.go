package history

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Recorder takes a process's lock operations as they complete. Implementations must be safe
// for concurrent use, and cheap: they are called on the purchase path while a lock is held.
type Recorder interface {
	Record(op LockOp)
}

// LockFile is a Recorder that appends each operation to a file as one JSON line, stamped with its
// process; several processes may share the file, and ReadLockOps skips a line a killed process
// cut. It is a test and lab tool (docs/testing.md#lock-histories). It is safe for concurrent use.
type LockFile struct {
	f       *os.File
	process string

	mu  sync.Mutex
	err error // the first write that failed
}

// CreateLockFile opens path for appending lock operations of the process named process (its
// pid, say), creating it if need be.
func CreateLockFile(path, process string) (*LockFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock history: %w", err)
	}
	return &LockFile{f: f, process: process}, nil
}

// Record appends op, with the file's process unless op names one. A failed write is kept
// for Close to return: the history is then incomplete, which the checker cannot tell.
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

// Close closes the file, and returns the first write that failed, if one did.
func (l *LockFile) Close() error {
	l.mu.Lock()
	werr := l.err
	l.mu.Unlock()
	if werr != nil {
		werr = fmt.Errorf("lock history %s: a write failed, the history is incomplete: %w", l.f.Name(), werr)
	}
	return errors.Join(werr, l.f.Close())
}

// ReadLockOps reads the lock operations of the JSON-lines files at paths (see LockFile), in
// file order. A last line without its newline (a process killed while writing it) is
// skipped; any other line that is not an operation is an error.
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
