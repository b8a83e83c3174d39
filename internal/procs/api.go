package procs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// API is a cmd/api process (LaunchAPI). Base may change until WaitReady returns; after that
// it is safe for concurrent use.
type API struct {
	Name string  // names the process in errors and in its log file's name
	Base string  // http://127.0.0.1:port (in a namespace, http://<its Inside address>:port)
	Log  *Buffer // what the process printed, across retried starts

	bin      string
	env      []string // KEY=value, as the caller gave them
	proc     *Process
	attempts int    // starts so far
	netns    *Netns // where it runs (LaunchAPIIn); nil: the root namespace
}

// StartAPI is LaunchAPI, then WaitReady("/readyz"); on error the process is stopped.
func StartAPI(bin, name string, env map[string]string) (*API, error) {
	return startAPI(bin, name, env, nil)
}

func startAPI(bin, name string, env map[string]string, ns *Netns) (*API, error) {
	a, err := launchAPI(bin, name, env, ns)
	if err != nil {
		return nil, err
	}
	if err := a.WaitReady("/readyz"); err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return a, nil
}

// StartAPIs starts n API processes, api1..apiN, and waits until all are ready; on error all are stopped.
func StartAPIs(bin string, n int, env map[string]string) ([]*API, error) {
	apis := make([]*API, 0, n)
	err := func() error {
		for i := range n {
			a, err := LaunchAPI(bin, fmt.Sprintf("api%d", i+1), env)
			if err != nil {
				return err
			}
			apis = append(apis, a)
		}
		for _, a := range apis {
			if err := a.WaitReady("/readyz"); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		for _, a := range apis {
			err = errors.Join(err, a.Close())
		}
		return nil, err
	}
	return apis, nil
}

// LaunchAPI starts bin on a free loopback port with env, PATH and HTTP_ADDR only, and returns at
// once. It dies with this program; the caller stops it with Close.
func LaunchAPI(bin, name string, env map[string]string) (*API, error) {
	return launchAPI(bin, name, env, nil)
}

func launchAPI(bin, name string, env map[string]string, ns *Netns) (*API, error) {
	a := &API{Name: name, Log: &Buffer{}, bin: bin, netns: ns}
	for k, v := range env {
		a.env = append(a.env, k+"="+v)
	}
	if err := a.launch(); err != nil {
		return nil, err
	}
	return a, nil
}

// launch starts the binary on a port free at this moment.
func (a *API) launch() error {
	addr, cmd := "", exec.Command(a.bin)
	if a.netns == nil {
		var err error
		if addr, err = FreeAddr(); err != nil {
			return err
		}
	} else {
		var bin io.Closer
		var err error
		addr = a.netns.listenAddr()
		if cmd, bin, err = a.netns.command(a.bin); err != nil {
			return err
		}
		defer bin.Close()
	}
	a.Base, a.attempts = "http://"+addr, a.attempts+1
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, a.env...), "HTTP_ADDR="+addr)
	proc, err := StartProcess(cmd, a.Log)
	if err != nil {
		return fmt.Errorf("start %s: %w", a.Name, err)
	}
	a.proc = proc
	return nil
}

// WaitReady waits up to 30 s for GET path to answer 200, or returns an error with the log's tail.
func (a *API) WaitReady(path string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if a.Exited() && a.attempts < 3 && strings.Contains(a.Log.String(), "address already in use") {
			if err := a.launch(); err != nil { // another process took the port between FreeAddr and the API's bind
				return err
			}
			continue
		}
		if a.Exited() {
			return fmt.Errorf("%s exited during start-up (%v); log:\n%s", a.Name, a.proc.err, a.Log.Tail(40))
		}
		if status, _ := a.Get(path, ""); status == http.StatusOK {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s: GET %s not 200 within 30s; log:\n%s", a.Name, path, a.Log.Tail(40))
}

// Close stops the process (Stop) and also reports a data race that its log shows.
func (a *API) Close() error {
	err := a.Stop()
	if strings.Contains(a.Log.String(), "WARNING: DATA RACE") {
		err = errors.Join(err, fmt.Errorf("%s reported a data race", a.Name))
	}
	return err
}

// Stop sends SIGTERM (resuming a paused process) and waits up to 30 s; it fails on a kill or a
// non-zero exit.
func (a *API) Stop() error {
	if a.Exited() {
		return nil
	}
	_ = a.proc.cmd.Process.Signal(syscall.SIGCONT)
	if !a.proc.Stop(syscall.SIGTERM, 30*time.Second) {
		return fmt.Errorf("%s did not exit within 30s of SIGTERM", a.Name)
	} else if a.proc.err != nil {
		return fmt.Errorf("%s exited with %v after SIGTERM", a.Name, a.proc.err)
	}
	return nil
}

// Signal sends sig to the process.
func (a *API) Signal(sig syscall.Signal) error {
	if err := a.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s: %w", sig, a.Name, err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to be gone.
func (a *API) Kill() error {
	if err := a.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	if !a.Wait(10 * time.Second) {
		return fmt.Errorf("%s still running 10s after SIGKILL", a.Name)
	}
	return nil
}

// Exited reports whether the process has exited.
func (a *API) Exited() bool { return a.proc.Exited() }

// Wait waits up to d for the process to exit and reports whether it did.
func (a *API) Wait(d time.Duration) bool { return a.proc.Wait(d) }

// Err is the process's exec.Cmd.Wait error; nil while it runs.
func (a *API) Err() error { return a.proc.Err() }

// Get performs GET path with token, if set; status 0 means no answer within 5 s.
func (a *API) Get(path, token string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodGet, a.Base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Metric returns the sum of name's series whose labels contain match.
func (a *API) Metric(name, match string) (float64, error) {
	status, body := a.Get("/metrics", "")
	if status != http.StatusOK {
		return 0, fmt.Errorf("%s GET /metrics = %d", a.Name, status)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') || !strings.Contains(rest, match) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, nil
}

// ErrorLines returns the process's log lines at level ERROR (cmd/api's JSON log).
func (a *API) ErrorLines() []string {
	var out []string
	for line := range strings.Lines(a.Log.String()) {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// Pid is the latest start's process id.
func (a *API) Pid() int { return a.proc.Pid() }

// LaunchAPIIn is LaunchAPI inside ns; env must name the servers through ns.Forward.
func LaunchAPIIn(ns *Netns, bin, name string, env map[string]string) (*API, error) {
	return launchAPI(bin, name, env, ns)
}

// StartAPIIn is LaunchAPIIn, then WaitReady("/readyz").
func StartAPIIn(ns *Netns, bin, name string, env map[string]string) (*API, error) {
	return startAPI(bin, name, env, ns)
}
