package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// PauseWALSenders stops (SIGSTOP) the node's WAL senders, the processes that stream its WAL
// to the standbys: from then on a standby receives nothing, and in synchronous_mode every
// COMMIT waits for it. It returns how many it stopped; ResumeWALSenders lets them go on.
// Killing the node meanwhile loses what they had not sent, as a primary's crash loses what
// its network had not carried yet.
func (n *PatroniNode) PauseWALSenders() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return 0, fmt.Errorf("pause the WAL senders of %s: %w", n.Name, errNotRunning)
	}
	pids, err := processesIn(initOf(n.proc.Pid()), []byte("walsender"))
	if err != nil {
		return 0, fmt.Errorf("pause the WAL senders of %s: %w", n.Name, err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err == nil {
			n.paused = append(n.paused, pid)
		}
	}
	return len(n.paused), nil
}

// ResumeWALSenders continues (SIGCONT) the WAL senders PauseWALSenders stopped.
func (n *PatroniNode) ResumeWALSenders() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pid := range n.paused {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	n.paused = nil
}

// errNotRunning is PauseWALSenders' error on a node that is stopped.
var errNotRunning = errors.New("not running")

// processesIn returns the host pids of the processes in init's PID namespace whose command
// line holds word (PostgreSQL's processes show their kind there: "postgres: scope:
// walsender ...").
func processesIn(init int, word []byte) ([]int, error) {
	if init <= 0 {
		return nil, fmt.Errorf("no PID namespace")
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", init))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if other, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil || other != ns {
			continue
		}
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, word) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
