package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/liveui"
	"github.com/seckill/seckill/internal/loadgen"
)

const uiHelp = `Serve a web page for running sales and watching them live (docs/ui.md): pick strategies
(sold by the -targets APIs, as compare does) or lab locks and a scenario (the lab starts its own
three API processes, as lab does), press Run, and watch orders and stock against the initial
stock, answers, latencies and the lock's figures move, then the audit's verdict of each, exactly
as the command line gives it. Past runs are kept under -dir, can be reopened, and downloaded as
the JSON and HTML reports compare and lab write. One run at a time; every run is bounded as on
the command line. Every asset is in the binary: the page needs no network.

What a run may attack is fixed here: the -targets and -etcd-targets APIs (a run picks among them,
never names a URL; the admin token goes to them only), at most -max-buyers buyers, -max-duration
per strategy and -max-rate requests per second. Only the page itself can start or stop a run (its
Origin and its per-start token). It listens on loopback only, answering its own address, unless
-public, which wants an access token (env LOADTEST_UI_ACCESS_TOKEN) asked of every request.`

// cmdUI serves the live page until ctx ends; a run going then is stopped and written first.
func cmdUI(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ui", "[flags]", uiHelp, stderr)
	e := envflag.New(fs, getenv)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	public := fs.Bool("public", false, "allow a listen address that is not loopback, and any Host header; wants -access-token")
	var targets, accessToken string
	e.StringVar(&targets, "targets", "LOADTEST_TARGETS", "http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083",
		"the APIs a strategies run may attack, comma-separated base URLs; a run picks among them (env LOADTEST_TARGETS; make demo-ui starts these three)")
	etcdTargets := fs.String("etcd-targets", "", "the APIs with LOCK_BACKEND=etcd a strategies run may attack, on which dlock runs beside -targets (compare -etcd-targets)")
	e.QuietVar(&accessToken, "access-token", "LOADTEST_UI_ACCESS_TOKEN", "",
		"password (basic auth, any user name) every request must carry; -public wants one of at least 16 characters (env LOADTEST_UI_ACCESS_TOKEN; prefer the env, argv is visible to ps)")
	limits := liveui.DefaultLimits
	fs.IntVar(&limits.Buyers, "max-buyers", limits.Buyers, "most concurrent buyers a run may ask for")
	fs.DurationVar(&limits.Duration, "max-duration", limits.Duration, "longest attack per strategy a run may ask for")
	fs.IntVar(&limits.Rate, "max-rate", limits.Rate, "most requests per second a run may ask for (a run is paced at its rate, this by default)")
	dir := fs.String("dir", defaultUIDir(), "where runs are kept, one directory each")
	labPrefix := fs.String("lab-redis-prefix", "", "REDIS_KEY_PREFIX of the lab's API processes; default lab- and 8 random characters per run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return loadgen.UsageError{Err: fmt.Errorf("-addr %q: %w", *addr, err)}
	}
	if !*public && !liveui.Loopback(host) {
		return loadgen.UsageError{Err: fmt.Errorf("-addr %s is not loopback: the page starts load; add -public (and an access token) to serve it there", *addr)}
	}
	switch {
	case *public && accessToken == "":
		return loadgen.UsageError{Err: errors.New("-public: set LOADTEST_UI_ACCESS_TOKEN (or -access-token) to a password of at least 16 characters: whoever reaches the page could start load otherwise")}
	case accessToken != "" && len(accessToken) < 16:
		return loadgen.UsageError{Err: fmt.Errorf("-access-token: %d characters, want at least 16", len(accessToken))}
	case accessToken != "" && accessToken == getenv("ADMIN_TOKEN"):
		return loadgen.UsageError{Err: errors.New("-access-token: is the API's ADMIN_TOKEN; give the page a password of its own")}
	}
	if err := limits.Validate(); err != nil {
		return loadgen.UsageError{Err: err}
	}
	// A run starts from compare's or lab's command line with no flag set: their defaults and
	// the environment (the admin token, PostgreSQL and Redis).
	var compare attackConfig
	compareFS, _ := compareFlags(&compare, getenv, io.Discard)
	var lab loadgen.LabConfig
	if err := errors.Join(compareFS.Parse(nil), labFlags(&lab, getenv, io.Discard).Parse(nil)); err != nil {
		return err
	}
	cfg := liveui.Config{Dir: *dir, Limits: limits, Public: *public, AccessToken: accessToken, LabPrefix: *labPrefix,
		Compare: compare.Config, Lab: lab}
	if cfg.Targets, err = liveui.FixedTargets("-targets", targets, nil); err != nil {
		return err
	}
	if cfg.EtcdTargets, err = liveui.FixedTargets("-etcd-targets", *etcdTargets, cfg.Targets); err != nil {
		return err
	}
	if getenv("ADMIN_TOKEN") == "" {
		fmt.Fprintln(stderr, "loadtest ui: ADMIN_TOKEN is not set: strategies runs will be refused (the lab needs none)")
	}
	u, err := liveui.New(cfg, stderr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	srv := &http.Server{Handler: u.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "loadtest ui: http://%s/  (runs kept in %s; Ctrl-C stops)\n", ln.Addr(), *dir)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	u.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx) // event streams of a run that ended have ended too
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// defaultUIDir is where runs are kept by default: the user's cache directory.
func defaultUIDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "seckill", "ui-runs")
	}
	return filepath.Join(os.TempDir(), "seckill-ui-runs")
}
