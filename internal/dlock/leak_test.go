package dlock_test

import (
	"runtime"
	"slices"
	"strings"
	"time"
)

// ownedFrames mark the goroutines that dlock starts, directly (the watchdog,
// the notifier) or through go-redis (pub/sub readers, connection pools).
// Frames of this test package read "internal/dlock_test." and do not match.
var ownedFrames = []string{"seckill/internal/dlock.", "github.com/redis/go-redis/"}

// ownedGoroutines returns the stacks of the running goroutines that dlock or
// go-redis own.
func ownedGoroutines() []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var owned []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if slices.ContainsFunc(ownedFrames, func(f string) bool { return strings.Contains(g, f) }) {
			owned = append(owned, g)
		}
	}
	return owned
}

// leakedGoroutines waits up to limit for the owned goroutines to exit (some
// of go-redis' take a moment after Close) and returns those still running.
func leakedGoroutines(limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		g := ownedGoroutines()
		if len(g) == 0 || time.Now().After(deadline) {
			return g
		}
		time.Sleep(20 * time.Millisecond)
	}
}
