package health

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// MaxClockSkew is the skew past which WatchSkew logs a warning.
const MaxClockSkew = time.Second

// SkewInterval is how often WatchSkew measures.
const SkewInterval = time.Minute

// MeasureSkew returns how far remote's clock is ahead of now's: remote's time less now's at
// the middle of the round trip. Its error is remote's.
func MeasureSkew(ctx context.Context, now func() time.Time, remote func(context.Context) (time.Time, error)) (time.Duration, error) {
	sent := now()
	at, err := remote(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the remote clock: %w", err)
	}
	back := now()
	return at.Sub(sent.Add(back.Sub(sent) / 2)), nil
}

// WatchSkew measures the skew at once and then every SkewInterval until ctx ends, giving each
// measurement to observe and logging a warning when it exceeds MaxClockSkew either way.
func WatchSkew(ctx context.Context, remote func(context.Context) (time.Time, error), observe func(time.Duration), log *slog.Logger) {
	t := time.NewTicker(SkewInterval)
	defer t.Stop()
	for {
		mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		skew, err := MeasureSkew(mctx, time.Now, remote)
		cancel()
		if err != nil {
			log.DebugContext(ctx, "clock skew not measured", "err", err)
		} else {
			observe(skew)
			if skew > MaxClockSkew || skew < -MaxClockSkew {
				log.WarnContext(ctx, "this process's clock differs from PostgreSQL's by over 1 s: sale windows open and close off time",
					"skew_seconds", skew.Seconds())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
