package health_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/health"
)

// TestMeasureSkew: the remote time is compared with the middle of the round trip.
func TestMeasureSkew(t *testing.T) {
	base := time.Date(2026, 12, 24, 20, 0, 0, 0, time.UTC)
	clock := base
	now := func() time.Time { return clock }
	for _, tc := range []struct {
		name         string
		trip, remote time.Duration // the round trip; the remote's reading, from base
		want         time.Duration
	}{
		{"in step", 200 * time.Millisecond, 100 * time.Millisecond, 0},
		{"remote ahead", 200 * time.Millisecond, 1600 * time.Millisecond, 1500 * time.Millisecond},
		{"remote behind", 40 * time.Millisecond, -2 * time.Second, -2020 * time.Millisecond},
	} {
		clock = base
		remote := func(context.Context) (time.Time, error) {
			clock = clock.Add(tc.trip) // the call takes the round trip
			return base.Add(tc.remote), nil
		}
		got, err := health.MeasureSkew(context.Background(), now, remote)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: skew = %v, want %v", tc.name, got, tc.want)
		}
	}
	boom := errors.New("boom")
	_, err := health.MeasureSkew(context.Background(), now, func(context.Context) (time.Time, error) { return time.Time{}, boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

// TestWatchSkewWarnsPastOneSecond: WatchSkew observes each measurement and logs a warning
// only when the clocks differ by more than MaxClockSkew, either way.
func TestWatchSkewWarnsPastOneSecond(t *testing.T) {
	for _, tc := range []struct {
		offset time.Duration
		warns  bool
	}{{500 * time.Millisecond, false}, {-500 * time.Millisecond, false}, {2 * time.Second, true}, {-2 * time.Second, true}} {
		var logged bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
		var observed []time.Duration
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // one measurement, then WatchSkew returns
		remote := func(context.Context) (time.Time, error) { return time.Now().Add(tc.offset), nil }
		health.WatchSkew(ctx, remote, func(d time.Duration) { observed = append(observed, d) }, log)
		if len(observed) != 1 || (observed[0]-tc.offset).Abs() > 100*time.Millisecond {
			t.Errorf("offset %v: observed %v", tc.offset, observed)
		}
		if warned := strings.Contains(logged.String(), "level=WARN"); warned != tc.warns {
			t.Errorf("offset %v: warned %v, want %v (log %q)", tc.offset, warned, tc.warns, logged.String())
		}
	}
}
