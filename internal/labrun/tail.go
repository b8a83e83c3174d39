package labrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/seckill/seckill/internal/history"
)

// tail follows a run's lock history as the API processes append to it (one JSON line per
// operation, each line one write), keeping each process's last operation on one key: where a
// holder is in its purchase, which the pause waits on (stopHolder). It is not safe for
// concurrent use.
type tail struct {
	path, key string
	off       int64
	rest      []byte                    // the start of a line not ended yet
	last      map[string]history.LockOp // process -> its last operation on key, faults aside
}

func newTail(path, key string) *tail {
	return &tail{path: path, key: key, last: map[string]history.LockOp{}}
}

// poll reads the lines appended since the last poll. A line that does not parse (the cut last
// line of a killed process, and the line appended to it) is skipped, as ReadLockOps does.
func (t *tail) poll() error {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing recorded yet
	}
	if err != nil {
		return fmt.Errorf("lock history: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return fmt.Errorf("lock history: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("lock history: %w", err)
	}
	t.off += int64(len(b))
	b = append(t.rest, b...)
	end := bytes.LastIndexByte(b, '\n')
	t.rest = bytes.Clone(b[end+1:])
	if end < 0 {
		return nil
	}
	for line := range bytes.SplitSeq(b[:end], []byte{'\n'}) {
		var op history.LockOp
		if json.Unmarshal(line, &op) != nil || op.Key != t.key || op.Kind == history.Fault {
			continue
		}
		t.last[op.Process] = op
	}
	return nil
}

// thinking reports whether process pid's last operation on the key, as of the last poll, is a
// read of the stock that found some: it holds the lock, has read, and thinks before it writes.
func (t *tail) thinking(pid int) bool {
	op, ok := t.last[strconv.Itoa(pid)]
	return ok && op.Kind == history.Read && op.Outcome == history.OK && op.Value != nil && *op.Value > 0
}
