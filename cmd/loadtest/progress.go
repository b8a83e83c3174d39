package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress writes a live line to w every interval while an attack runs: requests, outcomes
// so far and the stock left. On a terminal the line rewrites itself; elsewhere (CI logs) it
// is one line per interval. stock may be nil (the baseline has no product).
func progress(ctx context.Context, w io.Writer, interval time.Duration, name string, live *liveCounts,
	stock func(context.Context) (int64, error)) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	tty := isTerminal(w)
	began := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case <-t.C:
			}
			left := "-"
			if stock != nil {
				sctx, scancel := context.WithTimeout(ctx, min(interval, time.Second))
				if n, err := stock(sctx); err == nil {
					left = fmt.Sprint(n)
				} else {
					left = "?"
				}
				scancel()
			}
			line := progressLine(name, time.Since(began), live.snapshot(), left)
			if tty {
				fmt.Fprint(w, "\r\033[K"+line)
			} else {
				fmt.Fprintln(w, line)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// progressLine formats one progress line.
func progressLine(name string, elapsed time.Duration, c counts, stockLeft string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %5.1fs  req %d  bought %d  sold_out %d  already %d  busy %d",
		name, elapsed.Seconds(), c.total(), c[bought], c[soldOut], c[alreadyPurchased], c[busy]+c[rateLimited])
	fmt.Fprintf(&b, "  errors %d  stock %s", c.errors(), stockLeft)
	return b.String()
}

func isTerminal(w io.Writer) bool {
	if s, ok := w.(*syncWriter); ok {
		w = s.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
