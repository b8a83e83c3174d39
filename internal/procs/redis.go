package procs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a redis-server process; Close kills it and removes Dir. Safe for concurrent use.
type Redis struct {
	Addr string // 127.0.0.1:port, the same across restarts
	// Dir is its --dir, kept across restarts.
	Dir string
	// Bus is the cluster bus port, "" outside cluster mode.
	Bus string

	bin  string
	args []string
	log  *Buffer

	env    []string      // the process's environment; nil: this program's (see StartRedisFakeClock)
	exited func(pid int) // if set, called with its pid once each run of the process has exited

	mu   sync.Mutex
	proc *Process // nil while stopped
}

// StartRedis starts a redis-server without persistence, with extra arguments, and waits for
// PING. The caller calls Close.
func StartRedis(extra ...string) (*Redis, error) {
	return startRedis(nil, extra...)
}

// startRedis is StartRedis, with prepare (if not nil) called on each server before it starts.
func startRedis(prepare func(*Redis) error, extra ...string) (*Redis, error) {
	for try := 1; ; try++ {
		s, err := newRedis(extra...)
		if err != nil {
			return nil, err
		}
		if prepare != nil {
			if err := prepare(s); err != nil {
				return nil, errors.Join(err, s.Close())
			}
		}
		err = s.start()
		if err == nil {
			return s, nil
		}
		err = fmt.Errorf("%w\n%s", err, s.log.Tail(20))
		err = errors.Join(err, s.Close())
		// Another program (go test runs packages in parallel) may bind a port FreeAddr found
		// free: a new one, which this process has never handed out, then.
		if !errors.Is(err, errPortTaken) || try == 3 {
			return nil, err
		}
	}
}

// errPortTaken means the server that answered on a Redis's address is not its process.
var errPortTaken = errors.New("port taken by another process")

// newRedis is StartRedis's server, not started yet (start starts it); the caller closes it.
func newRedis(extra ...string) (*Redis, error) {
	bin, err := RedisBin()
	if err != nil {
		return nil, err
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "launch-redis-")
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	s := &Redis{Addr: addr, Dir: dir, bin: bin, log: &Buffer{}}
	s.args = []string{"--port", port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.Dir, "--logfile", "", "--daemonize", "no"}
	if argValue(extra, "--cluster-enabled") == "yes" {
		// Unasked, the bus listens on port+10000, which may lie in the ephemeral range and
		// be taken by any connection: the bus gets a port of its own from FreeAddr too.
		if s.Bus = argValue(extra, "--cluster-port"); s.Bus == "" {
			bus, err := FreeAddr()
			if err != nil {
				return nil, errors.Join(err, os.RemoveAll(dir))
			}
			_, s.Bus, _ = net.SplitHostPort(bus)
			s.args = append(s.args, "--cluster-port", s.Bus)
		}
		if argValue(extra, "--cluster-config-file") == "" {
			s.args = append(s.args, "--cluster-config-file", filepath.Join(dir, "nodes.conf"))
		}
	}
	s.args = append(s.args, extra...)
	return s, nil
}

// argValue returns the value that follows name in args (the last one), or "".
func argValue(args []string, name string) string {
	v := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			v = args[i+1]
		}
	}
	return v
}

// StartRedisReplica is StartRedis for a replica of master, waiting until it has synced.
func StartRedisReplica(master string, extra ...string) (*Redis, error) {
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		return nil, fmt.Errorf("master address %q: %w", master, err)
	}
	s, err := StartRedis(append([]string{"--replicaof", host, port}, extra...)...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := s.Client()
	defer rdb.Close()
	for {
		info, err := rdb.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(fmt.Errorf("replica %s of %s not synced: %v\n%s", s.Addr, master, err, info), s.Close())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Promote makes a replica a master (REPLICAOF NO ONE).
func (s *Redis) Promote() error { return s.Do(0, "REPLICAOF", "NO", "ONE") }

// Start restarts a stopped server, loading what it saved in Dir, and waits for PING.
func (s *Redis) Start() error {
	if err := s.start(); err != nil {
		return fmt.Errorf("%w\n%s", err, s.log.Tail(20))
	}
	return nil
}

// start is Start, saying what went wrong. A PONG proves only that some server answers on the
// address: the process id that INFO reports proves it is this one (go test runs the packages'
// test binaries in parallel, and FreeAddr cannot keep another program off a port). A server
// that wants a password is not asked.
func (s *Redis) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return nil
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = s.env
	proc, err := StartProcess(cmd, s.log)
	if err != nil {
		return fmt.Errorf("start redis-server on %s: %w", s.Addr, err)
	}
	s.proc = proc
	if err := waitPing(s.Addr, proc.done); err != nil {
		if strings.Contains(s.log.String(), "Address already in use") { // its port or its bus's
			err = errors.Join(err, errPortTaken)
		}
		return fmt.Errorf("redis-server on %s: %w", s.Addr, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return nil // a password wanted (NOAUTH), or no answer: the caller's first call will tell
	}
	if want := "process_id:" + strconv.Itoa(proc.cmd.Process.Pid) + "\r\n"; !strings.Contains(info, want) {
		return fmt.Errorf("redis-server on %s (pid %d): %w", s.Addr, proc.cmd.Process.Pid, errPortTaken)
	}
	return nil
}

// Stop kills the server, saving nothing, and waits for it to exit.
func (s *Redis) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	s.proc.Stop(syscall.SIGKILL, time.Minute) // works on a paused server too
	if s.exited != nil {
		s.exited(s.proc.cmd.Process.Pid)
	}
	s.proc = nil
}

// Close kills the server (Stop) and removes its Dir.
func (s *Redis) Close() error {
	s.Stop()
	return os.RemoveAll(s.Dir)
}

// Pid is the process id of the server's current run (0 while stopped).
func (s *Redis) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid()
}

// Pause freezes the server (SIGSTOP) until Resume.
func (s *Redis) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Redis) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Redis) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return fmt.Errorf("signal %v to redis-server on %s: not running", sig, s.Addr)
	}
	if err := s.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to redis-server on %s: %w", sig, s.Addr, err)
	}
	return nil
}

// Log is what the server printed.
func (s *Redis) Log() string { return s.log.String() }

// Client returns a client of the server that retries nothing; the caller closes it.
func (s *Redis) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
}

// waitPing waits up to 10 s for a PONG (or a NOAUTH) from addr, or for exited.
func waitPing(addr string, exited <-chan struct{}) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil || redis.IsAuthError(err) { // asking for a password is an answer too
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG within 10s: %w", err)
		}
	}
}

// Addrs returns the servers' addresses.
func Addrs(servers []*Redis) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	return addrs
}
