package procs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/faultproxy"
)

// A Redis Sentinel deployment of the caller's own, the way small teams run Redis with a
// replica: a master, one replica, and three sentinels (redis-server --sentinel) that agree (a
// quorum of 2) when the master is down and promote the replica. The replica replicates
// through a fault proxy (Link), so that its caller can hold it back: the master then takes writes
// the replica never gets, and a failover loses them, as the write-ups on Redis locks describe.
//
// The sentinels are told the master's real address, while the replica's master is the proxy:
// a sentinel "fixes" a replica that follows another address once it has seen it so for
// failover-timeout (SentinelFailoverTimeout), and the replica then follows the master around
// the proxy that holds it back.

// SentinelDownAfter is the sentinels' down-after-milliseconds.
const SentinelDownAfter = time.Second

// SentinelFailoverTimeout is the sentinels' failover-timeout, a day (docs/testing.md#launchers).
const SentinelFailoverTimeout = 24 * time.Hour

// SentinelOptions are the passwords of a Sentinel deployment; the zero value has none.
type SentinelOptions struct {
	// Password is the master's and replica's requirepass.
	Password string
	// SentinelPassword is the sentinels' own requirepass.
	SentinelPassword string
}

// Sentinels is a Redis Sentinel deployment. Safe for concurrent use.
type Sentinels struct {
	Name    string            // the master's name, as the sentinels know it
	Master  *Redis            // the master at the start
	Replica *Redis            // its replica, the one a failover promotes
	Link    *faultproxy.Proxy // the replica's connection to Master: HoldBackReplica stalls it

	opt   SentinelOptions
	nodes []*sentinelNode

	mu      sync.Mutex
	clients []*redis.Client // closed by Close
}

// sentinelNode is one sentinel process. Its configuration file is its own: a sentinel
// rewrites it with what it learns (the replica, the other sentinels, a new master).
type sentinelNode struct {
	addr string
	dir  string
	conf string
	log  *Buffer

	mu   sync.Mutex
	proc *Process // nil once stopped
}

// StartSentinels starts a master, a replica and three sentinels ("seckill") and waits until a
// failover can happen; opt may be nil. The caller calls Close.
func StartSentinels(opt *SentinelOptions) (_ *Sentinels, err error) {
	if opt == nil {
		opt = &SentinelOptions{}
	}
	var auth []string
	if opt.Password != "" {
		auth = []string{"--requirepass", opt.Password, "--masterauth", opt.Password}
	}
	d := &Sentinels{Name: "seckill", opt: *opt}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	// The master syncs its replica at once, not after Redis 7's 5 s.
	if d.Master, err = StartRedis(append([]string{"--repl-diskless-sync-delay", "0"}, auth...)...); err != nil {
		return nil, err
	}
	if d.Link, err = faultproxy.Open("", d.Master.Addr); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(d.Link.Addr())
	if d.Replica, err = StartRedis(append([]string{"--replicaof", host, port, "--repl-diskless-sync-delay", "0"}, auth...)...); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.waitSynced(ctx); err != nil {
		return nil, err
	}
	for range 3 {
		n, err := d.startSentinel()
		if n != nil {
			d.nodes = append(d.nodes, n)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := d.waitWatching(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// startSentinel writes a sentinel's configuration in a directory of its own and starts it. A
// node it returns, with or without an error, is to be stopped.
func (d *Sentinels) startSentinel() (*sentinelNode, error) {
	bin, err := RedisBin()
	if err != nil {
		return nil, err
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	_, masterPort, _ := net.SplitHostPort(d.Master.Addr)
	dir, err := os.MkdirTemp("", "launch-sentinel-")
	if err != nil {
		return nil, err
	}
	lines := []string{
		"port " + port, "bind 127.0.0.1", "daemonize no", `logfile ""`, "dir " + dir,
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %s 2", d.Name, masterPort),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", d.Name, SentinelDownAfter.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", d.Name),
		fmt.Sprintf("sentinel failover-timeout %s %d", d.Name, SentinelFailoverTimeout.Milliseconds()),
	}
	if d.opt.Password != "" {
		lines = append(lines, fmt.Sprintf("sentinel auth-pass %s %s", d.Name, d.opt.Password))
	}
	if d.opt.SentinelPassword != "" {
		lines = append(lines, "requirepass "+d.opt.SentinelPassword)
	}
	n := &sentinelNode{addr: addr, dir: dir, conf: filepath.Join(dir, "sentinel.conf"), log: &Buffer{}}
	if err := os.WriteFile(n.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return n, err
	}
	proc, err := StartProcess(exec.Command(bin, n.conf, "--sentinel"), n.log)
	if err != nil {
		return n, fmt.Errorf("start a sentinel on %s: %w", addr, err)
	}
	n.proc = proc
	if err := waitPing(addr, proc.Done()); err != nil {
		return n, fmt.Errorf("sentinel on %s: %w\n%s", addr, err, n.log.Tail(20))
	}
	return n, nil
}

// Close kills every process, closes the clients handed out and removes their files.
func (d *Sentinels) Close() error {
	d.mu.Lock()
	clients := d.clients
	d.clients = nil
	d.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	var errs []error
	for _, n := range d.nodes {
		n.stop()
		errs = append(errs, os.RemoveAll(n.dir))
	}
	if d.Replica != nil {
		errs = append(errs, d.Replica.Close())
	}
	if d.Link != nil {
		d.Link.Close()
	}
	if d.Master != nil {
		errs = append(errs, d.Master.Close())
	}
	return errors.Join(errs...)
}

func (n *sentinelNode) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		n.proc.Stop(syscall.SIGKILL, time.Minute)
		n.proc = nil
	}
}

// Addrs returns the sentinels' addresses: REDIS_SENTINEL_ADDRS.
func (d *Sentinels) Addrs() []string {
	addrs := make([]string, len(d.nodes))
	for i, n := range d.nodes {
		addrs[i] = n.addr
	}
	return addrs
}

// Logs returns what the sentinels printed, each under its address.
func (d *Sentinels) Logs() string {
	var b strings.Builder
	for _, n := range d.nodes {
		fmt.Fprintf(&b, "--- sentinel %s\n%s", n.addr, n.log.String())
	}
	return b.String()
}

// dataClient is a client of the master or the replica at addr, logged in, that retries
// nothing; it is closed by Close.
func (d *Sentinels) dataClient(addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Password: d.opt.Password, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clients = append(d.clients, rdb)
	return rdb
}

// isMaster reports whether the server at addr says it is a master (ROLE).
func (d *Sentinels) isMaster(ctx context.Context, addr string) bool {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Password: d.opt.Password, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	role, err := rdb.Do(ctx, "ROLE").Slice()
	return err == nil && len(role) > 0 && role[0] == "master"
}

// withSentinel calls f with a client of the sentinel at addr, closed when it returns.
func (d *Sentinels) withSentinel(addr string, f func(*redis.SentinelClient) error) error {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr, Password: d.opt.SentinelPassword, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	return f(c)
}

// MasterClient returns a client of the first master that retries nothing; Close closes it.
func (d *Sentinels) MasterClient() *redis.Client  { return d.dataClient(d.Master.Addr) }
func (d *Sentinels) ReplicaClient() *redis.Client { return d.dataClient(d.Replica.Addr) }

// waitSynced waits until the replica has synced with the master (master_link_status:up).
func (d *Sentinels) waitSynced(ctx context.Context) error {
	rdb := d.dataClient(d.Replica.Addr)
	var info string
	var err error
	for !strings.Contains(info, "master_link_status:up") {
		select {
		case <-ctx.Done():
			return fmt.Errorf("replica %s of %s (through %s) not synced: %v\n%s", d.Replica.Addr, d.Master.Addr, d.Link.Addr(), err, info)
		case <-time.After(20 * time.Millisecond):
		}
		info, err = rdb.Info(ctx, "replication").Result()
	}
	return nil
}

// waitWatching waits until every sentinel sees the master up, knows its replica, and knows
// the two other sentinels (they meet on the master's hello channel, every 2 s).
func (d *Sentinels) waitWatching(ctx context.Context) error {
	for _, n := range d.nodes {
		var m map[string]string
		var err error
		for !(err == nil && m["num-slaves"] == "1" && m["num-other-sentinels"] == "2" && m["flags"] == "master") {
			select {
			case <-ctx.Done():
				return fmt.Errorf("sentinel %s does not watch the deployment yet: %v, %v\n%s", n.addr, m, err, n.log.Tail(20))
			case <-time.After(50 * time.Millisecond):
			}
			err = d.withSentinel(n.addr, func(c *redis.SentinelClient) error {
				m, err = c.Master(ctx, d.Name).Result()
				return err
			})
		}
	}
	return nil
}
