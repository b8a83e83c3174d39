package launch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// PatroniOptions configures StartPatroni. The zero value (with Etcd set) is two nodes on
// loopback with synchronous replication, as deploy/patroni/patroni.yml has it.
type PatroniOptions struct {
	// Etcd holds the client URLs (http://host:port) of the etcd cluster that keeps the leader
	// key. Required.
	Etcd []string
	// Nodes is how many nodes. Default: 2.
	Nodes int
	// Async turns synchronous_mode off: COMMIT returns before the standby has the WAL. It is
	// for the negative control that shows what a failover loses then.
	Async bool
	// Netns runs each node in a network namespace of its own (StartNetns), which the node's
	// Isolate cuts off; it needs root, ip and nft. Default: every node on loopback.
	Netns bool
	// Name goes into the names of the namespaces (a test's name, say).
	Name string
}

// Patroni is a PostgreSQL cluster of the caller's own managed by Patroni (StartPatroni):
// one primary and standbys, each node a Patroni process and its PostgreSQL, run as the
// postgres OS user. Close kills every node and removes their data. It is safe for
// concurrent use.
type Patroni struct {
	Scope    string // the cluster's name in etcd
	Nodes    []*PatroniNode
	Password string // the postgres role's
	Async    bool   // synchronous_mode off (PatroniOptions.Async)

	dir      string
	restUser string // the REST API's basic auth for its writes
	restPass string
}

// PatroniConfig is the path of the project's Patroni configuration, deploy/patroni/patroni.yml:
// in the source tree this file was compiled from, or else (a -trimpath build) in the first
// directory up from the working directory that has it.
func PatroniConfig() string {
	const rel = "deploy/patroni/patroni.yml"
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..", rel)
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, rel)); err == nil || filepath.Dir(dir) == dir {
			return filepath.Join(dir, rel)
		}
		dir = filepath.Dir(dir)
	}
}

// PatroniBin returns the path of patroni, or an error wrapping ErrUnavailable.
func PatroniBin() (string, error) {
	return LookBin("patroni", "patroni not found: a PostgreSQL cluster managed by Patroni is started (`make up` installs Debian's patroni)")
}

// StartPatroni starts opt.Nodes nodes with the project's configuration (PatroniConfig) on free
// ports (three tries) and waits, 90 s at most, until one is the primary and every other streams
// from it (in synchronous_mode, one synchronously); the caller Closes the cluster. Its error
// wraps ErrUnavailable when not root, or without a postgres OS user, patroni, unshare, setpriv
// or PostgreSQL's binaries.
func StartPatroni(opt PatroniOptions) (*Patroni, error) {
	for try := 1; ; try++ {
		c, err := startPatroni(opt)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "already in use") {
			return c, err
		}
	}
}

func startPatroni(opt PatroniOptions) (_ *Patroni, err error) {
	if len(opt.Etcd) == 0 {
		return nil, errors.New("start Patroni: no etcd endpoints")
	}
	if opt.Nodes <= 0 {
		opt.Nodes = 2
	}
	bins, err := patroniBins()
	if err != nil {
		return nil, err
	}
	base, err := os.ReadFile(PatroniConfig())
	if err != nil {
		return nil, fmt.Errorf("start Patroni: %w", err)
	}
	sweepPatroniOnce.Do(sweepPatroniDirs)
	dir, err := os.MkdirTemp("", fmt.Sprintf("launch-patroni-%d-", os.Getpid()))
	if err != nil {
		return nil, err
	}
	c := &Patroni{Scope: "seckill-" + randomHex(6), Password: randomHex(12), Async: opt.Async, dir: dir,
		restUser: "patroni", restPass: randomHex(12)}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
		}
	}()
	if err := os.Chown(dir, int(bins.cred.Uid), int(bins.cred.Gid)); err != nil {
		return nil, err
	}
	for i := range opt.Nodes {
		n, err := c.newNode(fmt.Sprintf("node%d", i+1), opt, bins, base)
		if n != nil {
			c.Nodes = append(c.Nodes, n)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, n := range c.Nodes { // all at once: the first to take etcd's initialize key bootstraps
		if err := n.Start(); err != nil {
			return nil, err
		}
	}
	if _, err := c.WaitPrimary(90*time.Second, nil); err != nil {
		return nil, err
	}
	if err := c.WaitReplicating(90 * time.Second); err != nil {
		return nil, err
	}
	return c, nil
}

// Close kills every node (as Kill does) and removes their data and namespaces.
func (c *Patroni) Close() error {
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, n.Kill())
		if n.ns != nil {
			errs = append(errs, n.ns.Close())
		}
	}
	return errors.Join(append(errs, os.RemoveAll(c.dir))...)
}

// DSN is the URL of the cluster's postgres database as the postgres role, listing every
// node, with target_session_attrs=read-write: a client connects to whichever node is the
// primary (pgx and libpq try the hosts in turn), 2 s at most per host.
func (c *Patroni) DSN() string {
	hosts := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		hosts[i] = n.Addr
	}
	return c.dsn(strings.Join(hosts, ","), "&target_session_attrs=read-write")
}

func (c *Patroni) dsn(hosts, extra string) string {
	return fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable&connect_timeout=2%s",
		url.QueryEscape(c.Password), hosts, extra)
}

// sweepPatroniOnce removes the directories of dead programs' clusters, once per process.
var sweepPatroniOnce sync.Once

// sweepPatroniDirs removes the data of clusters whose program is gone: one killed before it
// closed them (a test binary past its -timeout) leaves them behind; their processes died
// with it.
func sweepPatroniDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "launch-patroni-*-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.Split(filepath.Base(d), "-")[2])
		if err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(d)
		}
	}
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
