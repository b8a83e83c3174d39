package health_test

import (
	"context"
	"errors"
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
