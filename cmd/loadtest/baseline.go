package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/seckill/seckill/internal/ceiling"
)

// Names of the baseline rows of the reports.
const (
	soldOutRowName  = "sold out (stock 0)"
	ginBaselineName = "bare gin 409"
)

// bareGinEnv, when set, turns this program into one bare gin server (see serveBareGin):
// the harness starts copies of its own executable that way, so that the baseline runs in
// processes of its own, as the API does, and not inside the load generator.
const bareGinEnv = "LOADTEST_SERVE_BARE_GIN"

// serveBareGin serves, on a free loopback port, the sold-out ceiling (internal/ceiling): a
// gin handler that does nothing but answer every purchase 409 sold_out. It writes its address
// as one line on stdout, then serves until stdin closes or SIGTERM.
func serveBareGin(stdin io.Reader, stdout io.Writer) error {
	r := ceiling.Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintln(stdout, ln.Addr().String())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { _, _ = io.Copy(io.Discard, stdin); stop() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The harness stops us after its attack: nothing is left to drain. (Shutdown would wait
	// 5 s for connections the load generator opened but never used.)
	return srv.Close()
}

// startBareGins starts n bare gin processes and returns their base URLs and a function that
// stops them (closing their stdin, then waiting).
func startBareGins(n int, stderr io.Writer) (bases []string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("bare gin baseline: %w", err)
	}
	type child struct {
		cmd   *exec.Cmd
		stdin io.Closer
	}
	var children []child
	stop = func() {
		for _, c := range children {
			c.stdin.Close()
		}
		for _, c := range children {
			done := make(chan struct{})
			go func() { c.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				c.cmd.Process.Kill()
				<-done
			}
		}
	}
	for range n {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), bareGinEnv+"=1")
		cmd.Stderr = stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			stop()
			return nil, nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			stop()
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, fmt.Errorf("bare gin baseline: %w", err)
		}
		children = append(children, child{cmd, stdin})
		addr := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			addr <- strings.TrimSpace(line)
			_, _ = io.Copy(io.Discard, stdout)
		}()
		select {
		case a := <-addr:
			if a == "" {
				stop()
				return nil, nil, errors.New("bare gin baseline: the server process did not start")
			}
			bases = append(bases, "http://"+a)
		case <-time.After(10 * time.Second):
			stop()
			return nil, nil, errors.New("bare gin baseline: the server process did not say its address within 10s")
		}
	}
	return bases, stop, nil
}

// runBaselines measures sold-out rejection twice with the scenario's pacer: on the API,
// with a product of stock 0, and on as many bare gin processes as there are API targets.
// The first is judged like any safe run (nothing may be sold); the second has nothing to
// audit.
func runBaselines(ctx context.Context, cfg config, aud *auditor, outs *outputs, stderr io.Writer) ([]runReport, error) {
	soldOutRun, err := runProduct(ctx, cfg, "dlock", 0, soldOutRowName, aud, outs, stderr)
	if err != nil {
		return nil, err
	}
	bases, stop, err := startBareGins(len(cfg.targets), stderr)
	if err != nil {
		return nil, err
	}
	defer stop()
	b := newBuyers(cfg.firstUser, cfg.repeatShare, cfg.seed)
	live := &liveCounts{}
	stopProgress := progress(ctx, stderr, cfg.progress, ginBaselineName, live, nil)
	res, err := attack(ctx, specFor(cfg, ginBaselineName, newTargeter(purchaseURLs(bases, 1), b)), live, outs.enc)
	stopProgress()
	if err != nil {
		return nil, err
	}
	if err := outs.addPlot(res); err != nil {
		return nil, err
	}
	gin := runReport{Name: ginBaselineName, Stats: summarize(res), Verdict: verdict{OK: true, Label: "-"}}
	gin.Buyers.Distinct, gin.Buyers.Repeats = b.issued()
	fmt.Fprintf(stderr, "[%s] %d processes: %d requests, %.0f rejections/s\n", ginBaselineName, len(bases), gin.Stats.Requests, gin.Stats.RejectionsPerSec)
	return []runReport{soldOutRun, gin}, nil
}
