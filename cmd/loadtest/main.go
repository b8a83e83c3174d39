// Command loadtest fires real HTTP load at one or more seckill API processes with vegeta's
// library, then audits the product through the API and directly in PostgreSQL and Redis:
// orders, stock, oversold, duplicate buyers, Redis/PostgreSQL agreement.
//
//	loadtest run [flags]       one product, one strategy: report and audit
//	loadtest compare [flags]   the same scenario for every strategy in turn, then one table
//	loadtest baseline [flags]  sold-out rejection on the API beside a bare gin handler
//	loadtest -version          print the build: version, VCS revision and time, modified, Go version
//
// Exit status: 0 when every audit passed; 3 when a safe strategy oversold, sold a user
// twice or left the audit inconsistent, or when naive did not oversell although
// -expect-naive-oversell asked it to; 2 for a bad command line; 1 when the harness could
// not run (API, PostgreSQL or Redis unreachable, files not writable).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/seckill/seckill/internal/buildinfo"
)

// errAuditFailed is returned (wrapped) when a run broke the promise; main exits 3.
var errAuditFailed = errors.New("audit failed")

// Exit statuses of main.
const (
	exitOK          = 0
	exitHarness     = 1
	exitUsage       = 2
	exitAuditFailed = 3
)

func main() {
	if os.Getenv(bareGinEnv) != "" {
		if err := serveBareGin(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest: bare gin baseline:", err)
			os.Exit(exitHarness)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	code := exitCode(err)
	if err != nil && code != exitOK {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
	}
	os.Exit(code)
}

// exitCode maps the error of run to the exit status documented above.
func exitCode(err error) int {
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errAuditFailed):
		return exitAuditFailed
	case errors.As(err, &usage):
		return exitUsage
	}
	return exitHarness
}

var commandHelp = map[string]string{
	"run": "Create one product (-stock, -strategy, -think-ms) through the admin API, attack its purchase\n" +
		"route on every -targets URL, audit it, and report. Fails (exit 3) when a safe strategy oversold,\n" +
		"sold a user twice, or left the audit inconsistent.",
	"compare": "Run the same scenario against each of -strategies in turn (each on a fresh product), then\n" +
		"print one table. With -baseline, also measure sold-out rejection on a stock-0 product and on a\n" +
		"bare gin handler. With -runs N, repeat everything N times and report medians.",
	"baseline": "Measure sold-out rejection throughput on the API (a stock-0 product) beside bare gin\n" +
		"handlers that only answer 409 sold_out (one process per target), attacked the same way.",
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: loadtest run|compare|baseline [flags]   (loadtest CMD -h lists the flags)")
	fmt.Fprintln(w, "       loadtest -version                      (prints the build)")
	for _, cmd := range []string{"run", "compare", "baseline"} {
		fmt.Fprintf(w, "\n%s:\n%s\n", cmd, commandHelp[cmd])
	}
}

// run is the whole program. args[0] is the program name.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		usage(stderr)
		return usageError{errors.New("no command")}
	}
	cmd := args[1]
	switch cmd {
	case "run", "compare", "baseline":
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	case "-version", "--version":
		fmt.Fprintln(stdout, "loadtest", buildinfo.Read())
		return nil
	default:
		usage(stderr)
		return usageError{fmt.Errorf("unknown command %q", cmd)}
	}
	cfg, err := parseConfig(cmd, args[2:], getenv, stderr)
	if err != nil {
		return err
	}
	return execute(ctx, cfg, stdout, &syncWriter{w: stderr})
}

// syncWriter serialises writes to w: the progress line, the baseline processes' output and
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
