package loadgen

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// WaitReady polls every target's /readyz for up to wait until each answers 200; a failed TLS
// handshake ends it at once.
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
