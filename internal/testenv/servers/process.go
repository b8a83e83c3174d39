package servers

import (
	"os/exec"
	"syscall"
	"time"

	"github.com/seckill/seckill/internal/launch"
)

// process and startProcess are launch.Process for a launcher of this package's that starts
// a process launch does not know (haproxy.go). Its err is Err().
type process struct {
	*launch.Process
	cmd  *exec.Cmd
	done <-chan struct{} // closed when the process has exited
}

// startProcess starts cmd with its output going to log (see launch.StartProcess).
func startProcess(cmd *exec.Cmd, log *Buffer) (*process, error) {
	p, err := launch.StartProcess(cmd, log)
	if err != nil {
		return nil, err
	}
	return &process{Process: p, cmd: cmd, done: p.Done()}, nil
}

func (p *process) exited() bool { return p.Exited() }

func (p *process) wait(d time.Duration) bool { return p.Wait(d) }

func (p *process) stop(sig syscall.Signal, d time.Duration) bool { return p.Stop(sig, d) }

func (p *process) signal(sig syscall.Signal) error { return p.Signal(sig) }
