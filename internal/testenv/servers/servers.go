// Package servers is the one place that starts processes for tests: redis-server and a Redis
// Cluster (StartRedis, StartRedisCluster), a PostgreSQL cluster (StartPostgres), an etcd member
// or an etcd cluster (StartEtcd, StartEtcdCluster), cmd/api built for the test binary
// (BuildAPI, StartAPI), each on a free loopback port, and headless Chromium (StartBrowser). It
// holds the small helpers such tests share: a free address, a log buffer. It imports nothing
// of seckill (cmd/api is built by its import path), so the tests of every package can use it,
// internal/dlock's included. Every process started here is stopped when the test ends, and
// dies with the test binary (Pdeathsig) if that ends first.
//
// SERVERS_LOGS=1 prints the tail of each API process's log when its test ends, as a failed
// test does; SERVERS_LOGDIR=<dir> writes each whole API log to <dir>/<test>-<name>.log.
package servers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/procstat"
)

// FreeAddr returns a loopback host:port that is free now and lies below the kernel's
// ephemeral port range, so that no outgoing connection takes it before a server binds it, or
// while a server that a test stops and starts again is down. It never returns a port twice in
// one process: a server stopped for a while (an etcd member, a Redis restarted on its port)
// keeps its port for its restart, which another test of the same binary could otherwise get
// and bind meanwhile (TestEtcdClusterQuorumLoss once found its member's port taken).
func FreeAddr(t T) string {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		port := 10000 + rand.IntN(max(low-10000, 1))
		if _, taken := handedOut.LoadOrStore(port, true); taken {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatalf("no free loopback port between 10000 and %d", low)
	return ""
}

// handedOut holds the ports FreeAddr has returned (or found taken) in this process.
var handedOut sync.Map // int -> true

// ephemeralLow is the first port of the kernel's ephemeral range (32768 if unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
			return n
		}
	}
	return 32768
}

// Buffer is a bytes.Buffer that a server's log output and the test may share. It is safe
// for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail returns the last n lines.
func (b *Buffer) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// process is one run of a child process.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's result, valid once done is closed
}

// startProcess starts cmd with its output going to log. Unless cmd sets SysProcAttr, the
// process is sent SIGKILL if the test binary dies first (Pdeathsig).
func startProcess(cmd *exec.Cmd, log *Buffer) (*process, error) {
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *process) exited() bool { return p.wait(0) }

// wait waits up to d for the process to exit and reports whether it did.
func (p *process) wait(d time.Duration) bool {
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

// stop sends sig and waits up to d for the process to exit; if it has not, it is killed
// and stop reports false once it is gone.
func (p *process) stop(sig syscall.Signal, d time.Duration) bool {
	_ = p.cmd.Process.Signal(sig)
	if p.wait(d) {
		return true
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return false
}

// signal sends sig to the process. After SIGSTOP it waits (up to 5 s) until every thread of
// the process has stopped: kill returns before they do, and a thread still running could
// answer one more request after Pause (TestEtcdStopStart saw a paused etcd answer /health).
func (p *process) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil || sig != syscall.SIGSTOP {
		return err
	}
	pid := p.cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); !allStopped(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			return fmt.Errorf("pid %d: not stopped 5s after SIGSTOP", pid)
		}
	}
	return nil
}

// allStopped reports whether every thread of process pid is stopped. Where /proc cannot be
// read, it reports true: there is no way to wait, and nothing else to do.
func allStopped(pid int) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, task := range tasks {
		s, err := procstat.Read(dir + "/" + task.Name() + "/stat")
		var gone *fs.PathError
		switch {
		case errors.As(err, &gone): // the thread ended
		case err != nil || !s.Stopped(): // a line it cannot read is not a stopped thread
			return false
		}
	}
	return true
}

// lookBin returns the path of the program name on PATH, in /usr/bin or in /usr/local/bin (where
// Debian's packages and `make up` put them), or skips the test saying why.
func lookBin(t testing.TB, name, why string) string {
	t.Helper()
	for _, p := range []string{name, "/usr/bin/" + name, "/usr/local/bin/" + name} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip(why)
	return ""
}
