package loadgen

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress writes a live line to w every interval while an attack runs (see follow):
// requests, outcomes so far and the stock left. On a terminal the line rewrites itself and
// is cleared at the end; elsewhere (CI logs) it is one line per interval, and a last one at
// the end. stock may be nil (the baseline has no product).
func progress(ctx context.Context, w io.Writer, interval time.Duration, name string, live *liveCounts,
	stock func(context.Context) (int64, error)) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	tty := isTerminal(w)
	stopFollow := follow(ctx, watch{name: name, interval: interval, live: live, stock: stock, emit: func(s LiveSample) {
		left := "-"
		if stock != nil {
			left = "?"
			if s.Stock != nil {
				left = fmt.Sprint(*s.Stock)
			}
		}
		line := progressLine(name, time.Duration(s.MS)*time.Millisecond, s.counts, left)
		if tty {
			fmt.Fprint(w, "\r\033[K"+line)
		} else {
			fmt.Fprintln(w, line)
		}
	}})
	return func() {
		stopFollow()
		if tty {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}

// progressLine formats one progress line.
func progressLine(name string, elapsed time.Duration, c Counts, stockLeft string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %5.1fs  req %d  bought %d  sold_out %d  already %d  busy %d",
		name, elapsed.Seconds(), c.Total(), c[Bought], c[SoldOut], c[AlreadyPurchased], c[Busy]+c[RateLimited])
	if c[Accepted] > 0 { // queue strategy only
		fmt.Fprintf(&b, "  accepted %d", c[Accepted])
	}
	fmt.Fprintf(&b, "  errors %d  stock %s", c.Errors(), stockLeft)
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
