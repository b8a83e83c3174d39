package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Names of the baseline rows of the reports.
const (
	SoldOutRowName  = "sold out (stock 0)"
	GinBaselineName = "bare gin 409"
)

// runBaselines measures sold-out rejection twice with the scenario's pacer: on the API,
// with a product of stock 0, and on as many ceiling processes (loadtest ceiling) as there are
// API targets. The first is judged like any safe run (nothing may be sold); the second has
// nothing to audit.
func (s *session) runBaselines(ctx context.Context) ([]RunReport, error) {
	cfg := s.cfg
	soldOutRun, err := s.runProduct(ctx, Item{Name: SoldOutRowName, Strategy: "dlock", Targets: cfg.Targets}, 0)
	if err != nil {
		return nil, err
	}
	bases, stop, err := startCeilings(cfg.Ceiling, len(cfg.Targets), s.stderr)
	if err != nil {
		return nil, err
	}
	defer stop()
	b := newBuyers(cfg.FirstUser, cfg.RepeatShare, cfg.Seed)
	live := &liveCounts{}
	stopProgress := progress(ctx, s.stderr, cfg.Progress, GinBaselineName, live, nil)
	res, err := s.attack(ctx, GinBaselineName, newTargeter(purchaseURLs(bases, 1), b, cfg.Deploy.Tokens), live, nil, nil, nil, nil)
	stopProgress()
	if err != nil {
		return nil, err
	}
	gin := RunReport{Name: GinBaselineName, Stats: summarize(res), Verdict: verdict{OK: true, Label: "-"}}
	gin.Buyers.Distinct, gin.Buyers.Repeats = b.issued()
	fmt.Fprintf(s.stderr, "[%s] %d processes: %d requests, %.0f rejections/s\n", GinBaselineName, len(bases), gin.Stats.Requests, gin.Stats.RejectionsPerSec)
	printCPU(s.stderr, GinBaselineName, gin.Stats)
	return []RunReport{soldOutRun, gin}, nil
}

// startCeilings starts n ceiling processes, each running the command argv (Config.Ceiling:
// cmd/loadtest's own executable, `loadtest ceiling`), so that the ceiling runs in processes of
// its own, as the API does, and not inside the load generator. It returns their base URLs and
// a function that stops them (closing their stdin, then waiting). The children inherit this
// process's environment, as os/exec does by default: the ceiling reads no variable.
func startCeilings(argv []string, n int, stderr io.Writer) (bases []string, stop func(), err error) {
	if len(argv) == 0 {
		return nil, nil, errors.New("ceiling: no command to start one (Config.Ceiling)")
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
		cmd := exec.Command(argv[0], argv[1:]...)
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
			return nil, nil, fmt.Errorf("ceiling: %w", err)
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
				return nil, nil, errors.New("ceiling: the server process did not start")
			}
			bases = append(bases, "http://"+a)
		case <-time.After(10 * time.Second):
			stop()
			return nil, nil, errors.New("ceiling: the server process did not say its address within 10s")
		}
	}
	return bases, stop, nil
}
