// Command api serves the seckill flash-sale HTTP API.
//
//	api [serve] [flags]  migrate the database (unless -migrate=false), then serve
//	api migrate [flags]  apply pending migrations and exit
//	api healthcheck      exit 0 when the local API answers /readyz with 200 (for containers)
//	api version          print the build: version, VCS revision and time, modified, Go version (also -version)
//	api -h               print the usage message: the commands and every flag (also api help)
//
// Configuration comes from the environment (HTTP_ADDR, DATABASE_URL, REDIS_ADDR, ADMIN_TOKEN,
// ...); a flag of the same meaning overrides its variable, and a secret may be read from the
// file its _FILE form names (ADMIN_TOKEN_FILE). See docs/configuration.md for the table.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/seckill/seckill/internal/buildinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.LookupEnv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

// usage heads the usage message of -h and of a flag error; the flags follow.
const usage = `usage: api [COMMAND] [flags]

commands:
  serve        migrate the database (unless -migrate=false), then serve (the default)
  migrate      apply pending migrations and exit
  healthcheck  exit 0 when the local API answers /readyz with 200 (for containers)
  version      print the build: version, VCS revision and time, modified, Go version (also -version)

Every setting is an environment variable that its flag overrides (docs/configuration.md).
A secret may instead be read from a file named by its _FILE form: DATABASE_URL_FILE,
REDIS_ADDR_FILE, REDIS_CLUSTER_ADDRS_FILE, REDIS_SENTINEL_ADDRS_FILE, REDLOCK_ADDRS_FILE,
REDIS_PASSWORD_FILE, REDIS_SENTINEL_PASSWORD_FILE, ETCD_PASSWORD_FILE, ADMIN_TOKEN_FILE. Booleans are what Go's strconv.ParseBool reads:
1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False.

flags:
`

// run is the whole program: it returns when ctx is cancelled (after a graceful shutdown) or
// when start-up fails. -h returns nil once the usage message is printed. lookupEnv is
// os.LookupEnv: a variable set but empty is not one unset.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	args = args[1:]
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "serve", "migrate", "healthcheck":
			cmd, args = args[0], args[1:]
		case "version": // as -version: the rest of the configuration does not matter
			args = append([]string{"-version"}, args[1:]...)
		case "help":
			args = []string{"-h"}
		}
	}
	cfg, err := parseConfig(args, lookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	build := buildinfo.Read()
	if cfg.version {
		fmt.Fprintln(stdout, "api", build)
		return nil
	}
	log := newLogger(stderr, cfg.logLevel)
	switch cmd {
	case "migrate":
		return migrateOnly(ctx, cfg, log, stdout)
	case "healthcheck":
		return healthcheck(ctx, cfg.addr, stdout)
	}
	return serve(ctx, cfg, build, log)
}
