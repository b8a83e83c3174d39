package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
)

// TestUIRefusesNonLoopback: loadtest ui refuses to listen off loopback without -public
// (internal/liveui's TestUIRefusals has the page's own refusals).
func TestUIRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"loadtest", "ui", "-addr", "0.0.0.0:0"}, func(string) string { return "" }, io.Discard, io.Discard)
	var usage loadgen.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "-public") {
		t.Errorf("ui -addr 0.0.0.0:0 = %v, want a usage error naming -public", err)
	}
}

// TestUIRefusesBadTargets: the targets loadtest ui fixes at start are base URLs, each named
// once across -targets and -etcd-targets (internal/liveui's TestUITargetsFixedAtStart has
// what a run may pick among them).
func TestUIRefusesBadTargets(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{{"-targets", "http://127.0.0.1:1,http://127.0.0.1:1/"}, {"-targets", "ftp://127.0.0.1:1"},
		{"-targets", "http://127.0.0.1:1", "-etcd-targets", "http://127.0.0.1:1"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // were it to serve
		err := run(ctx, append([]string{"loadtest", "ui", "-addr", "127.0.0.1:0", "-dir", t.TempDir()}, flags...), func(string) string { return "" }, io.Discard, io.Discard)
		cancel()
		var usage loadgen.UsageError
		if !errors.As(err, &usage) {
			t.Errorf("ui %v = %v, want a usage error", flags, err)
		}
	}
}
