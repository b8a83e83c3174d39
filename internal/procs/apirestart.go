package procs

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Restart starts the process again on the same address, once it has exited (a SIGTERM, Stop
// or Kill), with the same environment, and returns at once; WaitReady waits for it. What
// sits in front of it (a load balancer, a proxy) finds it where it was. A start that finds
// the address taken is not moved to another port: WaitReady returns an error then.
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
