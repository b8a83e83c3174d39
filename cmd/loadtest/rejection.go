package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Names of the baseline rows of the reports.
const (
	soldOutRowName  = "sold out (stock 0)"
	ginBaselineName = "bare gin 409"
)

// runBaselines measures sold-out rejection twice with the scenario's pacer: on the API,
// with a product of stock 0, and on as many ceiling processes (loadtest ceiling) as there are
// API targets. The first is judged like any safe run (nothing may be sold); the second has
// nothing to audit.
func (s *session) runBaselines(ctx context.Context) ([]runReport, error) {
	cfg := s.cfg
	soldOutRun, err := s.runProduct(ctx, item{name: soldOutRowName, strategy: "dlock", targets: cfg.targets}, 0)
	if err != nil {
		return nil, err
	}
	bases, stop, err := startCeilings(len(cfg.targets), s.stderr)
	if err != nil {
		return nil, err
	}
	defer stop()
	b := newBuyers(cfg.firstUser, cfg.repeatShare, cfg.seed)
	live := &liveCounts{}
	stopProgress := progress(ctx, s.stderr, cfg.progress, ginBaselineName, live, nil)
	res, err := s.attack(ctx, ginBaselineName, newTargeter(purchaseURLs(bases, 1), b), live, nil)
	stopProgress()
	if err != nil {
		return nil, err
	}
	gin := runReport{Name: ginBaselineName, Stats: summarize(res), Verdict: verdict{OK: true, Label: "-"}}
	gin.Buyers.Distinct, gin.Buyers.Repeats = b.issued()
	fmt.Fprintf(s.stderr, "[%s] %d processes: %d requests, %.0f rejections/s\n", ginBaselineName, len(bases), gin.Stats.Requests, gin.Stats.RejectionsPerSec)
	printCPU(s.stderr, ginBaselineName, gin.Stats)
	return []runReport{soldOutRun, gin}, nil
}

// startCeilings starts n ceiling processes, copies of this executable running `loadtest
// ceiling`, so that the ceiling runs in processes of its own, as the API does, and not inside
// the load generator. It returns their base URLs and a function that stops them (closing
// their stdin, then waiting). The children inherit this process's environment, as os/exec
// does by default: the ceiling reads no variable.
func startCeilings(n int, stderr io.Writer) (bases []string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("ceiling: %w", err)
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
		cmd := exec.Command(exe, ceilingCommand)
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
