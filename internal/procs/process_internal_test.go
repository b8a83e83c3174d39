package procs

import (
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/missing"
)

// TestAllStopped reads a real process's threads through procfs: a running sleep is not
// stopped, the same process after SIGSTOP is, and after SIGCONT it is not again.
func TestAllStopped(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		missing.Skip(t, "no sleep binary")
	}
	p, err := StartProcess(exec.Command(sleep, "30"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(syscall.SIGKILL, 5*time.Second) })
	if allStopped(p.Pid()) {
		t.Fatalf("a running sleep (pid %d) reads as stopped", p.Pid())
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if !allStopped(p.Pid()) {
		t.Errorf("sleep (pid %d) after SIGSTOP: not stopped", p.Pid())
	}
	if err := syscall.Kill(p.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for allStopped(p.Pid()) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if allStopped(p.Pid()) {
		t.Errorf("sleep (pid %d) after SIGCONT: still stopped", p.Pid())
	}
}
