package loadgen

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// WaitReady polls GET /readyz of every target, reached as d says, until each answers 200,
// for at most wait. A TLS handshake that failed ends the wait at once (waiting mends no
// certificate); the error is the last attempt's that wait did not cut short.
func WaitReady(ctx context.Context, d Deployment, targets []string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, t := range targets {
		c := d.apiClient(t, "")
		var last error
		for {
			err := c.Ready(ctx)
			if err == nil {
				break
			}
			if last == nil || ctx.Err() == nil {
				last = err
			}
			if handshakeFailed(err) {
				return fmt.Errorf("%s: TLS handshake: %w", t, err)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s is not ready: %w", t, last)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// syncWriter serialises writes to w: the progress line, the ceiling processes' output and
// the run summaries share stderr.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
