package procs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Process is one run of a child process. Safe for concurrent use.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's result, valid once done is closed
}

// StartProcess starts cmd, logging to log; unless SysProcAttr is set, it dies with this program.
func StartProcess(cmd *exec.Cmd, log io.Writer) (*Process, error) {
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the caller
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the process's exec.Cmd.Wait error; nil while it runs.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool { return p.Wait(0) }

// Wait waits up to d for the process to exit and reports whether it did.
func (p *Process) Wait(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Stop sends sig and waits up to d, then kills the process and returns false.
func (p *Process) Stop(sig syscall.Signal, d time.Duration) bool {
	_ = p.cmd.Process.Signal(sig)
	if p.Wait(d) {
		return true
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return false
}

// Signal sends sig; after SIGSTOP it waits up to 5 s until every thread has stopped.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil || sig != syscall.SIGSTOP {
		return err
	}
	pid := p.cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); !allStopped(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) || p.Exited() {
			return fmt.Errorf("pid %d: not stopped 5s after SIGSTOP", pid)
		}
	}
	return nil
}

// allStopped reports whether every thread of process pid is stopped. Where /proc cannot be
// read, it reports true: there is no way to wait, and nothing else to do.
func allStopped(pid int) bool {
	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return true
	}
	for _, thread := range threads {
		s, err := thread.Stat()
		var gone *fs.PathError
		switch {
		case errors.As(err, &gone): // the thread ended
		case err != nil || s.State != "T" && s.State != "t": // stopped by a signal or a tracer
			return false // a line it cannot read is not a stopped thread
		}
	}
	return true
}
