package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/seckill/seckill/internal/ceiling"
)

// ceilingCommand is the name of the ceiling subcommand, which the baseline starts.
const ceilingCommand = "ceiling"

const ceilingHelp = `Serve the sold-out ceiling (internal/ceiling): a bare gin handler that answers every purchase
409 with the API's sold_out problem and does nothing else. Print the address on stdout, then
serve until interrupted, SIGTERM, or until stdin closes. The baseline (and compare -baseline)
starts one per API target and attacks them like the API.`

// cmdCeiling serves the ceiling. It stops when its standard input closes, so that a ceiling
// the load generator started never outlives it: that is the one thing it reads of the process
// beyond its arguments, as run's signature has no stdin.
func cmdCeiling(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet(ceilingCommand, "[flags]", ceilingHelp, stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address; port 0 picks a free one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return serveCeiling(ctx, *addr, os.Stdin, stdout)
}

// serveCeiling serves the ceiling on addr, writes the address it listens on as one line to
// stdout, and serves until ctx ends or stdin reaches its end.
func serveCeiling(ctx context.Context, addr string, stdin io.Reader, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: ceiling.Handler(), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintln(stdout, ln.Addr().String())

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _, _ = io.Copy(io.Discard, stdin); stop() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The load generator stops us after its attack: nothing is left to drain. (Shutdown would
	// wait for connections it opened but never used.)
	return srv.Close()
}
