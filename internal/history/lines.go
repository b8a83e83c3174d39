package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// WriteLines writes ops to w as JSON lines, one operation a line.
func WriteLines[T Purchase | LockOp](w io.Writer, ops []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // Encode ends each value with a newline
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadLines reads JSON-line operations, skipping a last line cut short.
func ReadLines[T Purchase | LockOp](r io.Reader) ([]T, error) {
	var ops []T
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return ops, nil
		}
		if err != nil {
			return ops, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var op T
		if err := json.Unmarshal(line, &op); err != nil {
			return ops, fmt.Errorf("line %d: %w", n, err)
		}
		ops = append(ops, op)
	}
}
