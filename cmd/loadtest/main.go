// Command loadtest fires real HTTP load at one or more seckill API processes with vegeta's
// library, then audits the product through the API and directly in PostgreSQL and Redis:
// orders, stock, oversold, duplicate users, Redis/PostgreSQL agreement.
//
//	loadtest run [flags]             one product, one strategy: report and audit
//	loadtest compare [flags]         the same scenario for every strategy in turn, then one table
//	loadtest baseline [flags]        sold-out rejection on the API beside the bare gin ceiling
//	loadtest lab [flags]             the oversell lab: locks × scenarios, audited (docs/lab.md)
//	loadtest ui [flags]              a live page: start runs, watch them unfold, reopen them
//	loadtest merge [flags] JSON...   one report from the runs of several load machines
//	loadtest record [flags] JSON...  a bench record's markdown from JSON reports
//	loadtest ceiling [flags]         serve the bare gin ceiling (what baseline starts)
//	loadtest keys [flags]            make a key pair for buyer tokens: a private key and a JWKS
//	loadtest version                 print the build (also -version)
//
// loadtest CMD -h lists a command's flags. A secret may be read from the file its _FILE form
// names: ADMIN_TOKEN_FILE, DATABASE_URL_FILE, LOADTEST_UI_ACCESS_TOKEN_FILE. Each command lives
// in the file of its name, with its flags and help; config.go has the flags every attacking
// command shares. The engine (attack, audit, verdict, reports, the lab's run) is
// internal/loadgen, the live page internal/liveui, the bench records internal/benchrec.
//
// Exit status: 0 when every audit passed; 3 when a safe strategy oversold, sold a user
// twice or left the audit inconsistent, or when naive did not oversell although
// -expect-naive-oversell asked it to; 4 when every audit passed but a threshold (-max-p99,
// -max-error-rate, -min-orders-per-sec) was breached, once the report is written; 2 for a
// bad command line; 1 when the harness could not run (API, PostgreSQL or Redis unreachable,
// files not writable).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/loadgen"
)

// secrets are the variables that may hold a password or a token: each may be given in a file
// instead, named by its _FILE form.
var secrets = []string{"ADMIN_TOKEN", "DATABASE_URL", "LOADTEST_UI_ACCESS_TOKEN"}

// Exit statuses of main.
const (
	exitOK          = 0
	exitHarness     = 1
	exitUsage       = 2
	exitAuditFailed = 3
	exitThreshold   = 4
)

// command is one subcommand: its name, what runs it (with the arguments after the name), and
// one line of help for the usage message.
type command struct {
	name string
	run  func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
	help string
}

// commands are loadtest's subcommands, in the order the usage message lists them.
var commands = []command{
	{"run", cmdRun, "one product, one strategy: report and audit"},
	{"compare", cmdCompare, "the same scenario for every strategy in turn, then one table"},
	{"baseline", cmdBaseline, "sold-out rejection on the API beside the bare gin ceiling"},
	{"lab", cmdLab, "the oversell lab: every lab lock in every scenario, as a matrix (docs/lab.md)"},
	{"ui", cmdUI, "serve a live page: run sales and lab cells, watch them unfold, reopen past runs (docs/ui.md)"},
	{"merge", cmdMerge, "combine the JSON reports of runs from several load machines: merged histograms, summed counts"},
	{"record", cmdRecord, "write a bench record's markdown from JSON reports (make bench, make bench-hot)"},
	{ceilingCommand, cmdCeiling, "serve the bare gin ceiling (what baseline starts, one per target)"},
	{"keys", cmdKeys, "make a key pair for buyer tokens: a private key for -sign-key and a JWKS for the API (AUTH_JWKS_FILE)"},
	{"version", cmdVersion, "print the build: version, VCS revision and time, modified, Go version"},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	code := exitCode(err)
	if err != nil && code != exitOK {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
	}
	os.Exit(code)
}

// run is the whole program. args[0] is the program name; every environment variable is read
// through getenv.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		usage(stderr)
		return loadgen.UsageError{Err: errors.New("no command")}
	}
	name := args[1]
	switch name {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		if name != "version" { // the build, whatever the environment says
			var err error
			if getenv, err = envflag.Files(getenv, secrets...); err != nil {
				return loadgen.UsageError{Err: err}
			}
		}
		return c.run(ctx, args[2:], getenv, stdout, stderr)
	}
	usage(stderr)
	return loadgen.UsageError{Err: fmt.Errorf("unknown command %q", name)}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: loadtest COMMAND [flags]   (loadtest COMMAND -h lists its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.help)
	}
	fmt.Fprintln(w, "\nA secret may be read from the file its _FILE form names:", strings.Join(fileForms(), ", "))
}

// fileForms are the _FILE forms of the secrets.
func fileForms() []string {
	forms := make([]string, len(secrets))
	for i, s := range secrets {
		forms[i] = s + "_FILE"
	}
	return forms
}

// exitCode maps the error of run to the exit status documented above.
func exitCode(err error) int {
	var usage loadgen.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, loadgen.ErrAuditFailed):
		return exitAuditFailed
	case errors.Is(err, loadgen.ErrThresholds):
		return exitThreshold
	case errors.As(err, &usage):
		return exitUsage
	}
	return exitHarness
}
