package procs

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Restart starts the exited process again on the same address and returns at once; WaitReady
// fails if the address is taken.
func (a *API) Restart() error {
	if !a.Exited() {
		return fmt.Errorf("%s: Restart while it runs", a.Name)
	}
	if a.netns != nil {
		return fmt.Errorf("%s: Restart of a process in a network namespace is not supported", a.Name)
	}
	addr := strings.TrimPrefix(a.Base, "http://")
	cmd := exec.Command(a.bin)
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, a.env...), "HTTP_ADDR="+addr)
	proc, err := StartProcess(cmd, a.Log)
	if err != nil {
		return fmt.Errorf("restart %s: %w", a.Name, err)
	}
	// No new port for it (WaitReady moves a process whose port was taken while it had tries
	// left): its address is the point.
	a.proc, a.attempts = proc, 3
	return nil
}
