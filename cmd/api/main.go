// Command api serves the seckill flash-sale HTTP API.
//
//	api [flags]          migrate the database (unless -migrate=false), then serve
//	api migrate [flags]  apply pending migrations and exit
//	api healthcheck      exit 0 when the local API answers /readyz with 200 (for containers)
//	api -version         print the build: version, VCS revision and time, modified, Go version
//
// Configuration comes from the environment (HTTP_ADDR, DATABASE_URL, REDIS_ADDR, ADMIN_TOKEN,
// ...); a flag of the same meaning overrides its variable. See docs/configuration.md for the table.
package main

import (
	"context"
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
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

// run is the whole program: it returns when ctx is cancelled (after a graceful shutdown) or
// when start-up fails.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	args = args[1:]
	cmd := "serve"
	if len(args) > 0 && (args[0] == "migrate" || args[0] == "healthcheck") {
		cmd, args = args[0], args[1:]
	}
	cfg, err := parseConfig(args, getenv, stderr)
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
