package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// apiRun is one run of the whole program inside the test process (see startAPI), on a free
// loopback port. Its methods fail the test, so call them from the test's goroutine.
type apiRun struct {
	base string          // http://127.0.0.1:port
	logs *testenv.Buffer // everything the program logged

	t       *testing.T
	cancel  context.CancelFunc // ends the run as SIGTERM does
	done    chan error         // run's result
	stopped bool
}

// startAPI runs the program with env, and HTTP_ADDR set to a free loopback port, and returns
// once it answers /healthz. The test fails if the program exits during start-up. When the test
// ends the run is stopped as stop does, unless the test has stopped it already.
func startAPI(t *testing.T, env map[string]string) *apiRun {
	t.Helper()
	addr := testenv.FreeAddr(t)
	env["HTTP_ADDR"] = addr
	ctx, cancel := context.WithCancel(context.Background())
	r := &apiRun{base: "http://" + addr, logs: &testenv.Buffer{}, t: t, cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- run(ctx, []string{"api"}, lookup(env), io.Discard, r.logs)
	}()
	t.Cleanup(func() { r.stop() })
	r.waitHealthy()
	return r
}

// waitHealthy waits up to 20 s until GET /healthz answers, and fails the test if the program
// returns first or the time runs out.
func (r *apiRun) waitHealthy() {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-r.done:
			r.t.Fatalf("api exited during start-up: %v; logs:\n%s", err, r.logs)
		default:
		}
		if resp, err := http.Get(r.base + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("api did not answer %s/healthz; logs:\n%s", r.base, r.logs)
}

// stop ends the run's context (cancel alone does that without waiting), waits up to 20 s for
// the program to return, fails the test unless it returned nil, and returns everything it
// logged. Only the first call waits; later ones return the log.
func (r *apiRun) stop() string {
	r.t.Helper()
	if !r.stopped {
		r.stopped = true
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				r.t.Errorf("run returned %v; logs:\n%s", err, r.logs)
			}
		case <-time.After(20 * time.Second):
			r.t.Errorf("run did not return 20 s after cancel; logs:\n%s", r.logs)
		}
	}
	return r.logs.String()
}
