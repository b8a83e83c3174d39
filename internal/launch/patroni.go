package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

	"github.com/jackc/pgx/v5"
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

// StartPatroni starts opt.Nodes nodes with the project's configuration (PatroniConfig), each
// on free ports, and waits (90 s at most) until one is the primary and every other streams
// from it (in synchronous_mode, one as its synchronous standby). It returns an error wrapping
// ErrUnavailable when not root, without a postgres OS user, or without patroni, unshare,
// setpriv or PostgreSQL's server binaries. The caller owns the cluster: Close; on error it is
// closed already. A node that lost a port to another program makes the whole cluster start
// again on other ports (three tries).
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

// Primary returns the node that is the primary now: the only one whose REST API answers
// GET /primary with 200 (Patroni's check that it holds the leader key and runs as the
// primary). It returns an error when none does, or more than one.
func (c *Patroni) Primary() (*PatroniNode, error) {
	var found []*PatroniNode
	for _, n := range c.Nodes {
		if n.IsPrimary() {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errors.New("no Patroni node is the primary")
	}
	return nil, fmt.Errorf("%d Patroni nodes say they are the primary", len(found))
}

// WaitPrimary waits up to d until one node, other than not (nil: any), is the primary
// (Primary) and takes a read-write connection, and returns it.
func (c *Patroni) WaitPrimary(d time.Duration, not *PatroniNode) (*PatroniNode, error) {
	deadline := time.Now().Add(d)
	for {
		p, err := c.Primary()
		if err == nil && p != not {
			if err = p.readWrite(); err == nil {
				return p, nil
			}
		} else if err == nil {
			err = fmt.Errorf("%s is still the primary", p.Name)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no new primary within %v: %w%s", d, err, c.logTails(15))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitReplicating waits up to d until the primary has a standby streaming from it for every
// other node that runs: in synchronous_mode, one of them synchronous, in PostgreSQL and in
// etcd. Patroni promotes only a standby that etcd records as synchronous (its /sync key),
// which it writes a second or two after PostgreSQL made the standby synchronous: a primary
// lost in between leaves the cluster without one.
func (c *Patroni) WaitReplicating(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		err := c.replicating()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not replicating within %v: %w%s", d, err, c.logTails(15))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *Patroni) replicating() error {
	p, err := c.Primary()
	if err != nil {
		return err
	}
	want := 0
	for _, n := range c.Nodes {
		if n != p && n.Running() {
			want++
		}
	}
	var streaming, sync int
	err = p.query(`SELECT count(*), count(*) FILTER (WHERE sync_state = 'sync') FROM pg_stat_replication
		WHERE state = 'streaming'`, &streaming, &sync)
	switch {
	case err != nil:
		return err
	case streaming < want:
		return fmt.Errorf("%d of %d standbys stream from %s", streaming, want, p.Name)
	case !c.Async && want > 0 && sync == 0:
		return fmt.Errorf("no standby of %s is synchronous yet", p.Name)
	case !c.Async && want > 0:
		return p.syncRecorded()
	}
	return nil
}

// syncRecorded checks that the cluster, as the node's REST API reads it from etcd (GET
// /cluster), has a synchronous standby that runs.
func (n *PatroniNode) syncRecorded() error {
	status, body, err := n.rest("GET", "/cluster", "", 2*time.Second)
	if err != nil || status != 200 {
		return fmt.Errorf("GET %s/cluster: %d %v", n.API, status, err)
	}
	var cluster struct {
		Members []struct{ Name, Role, State string }
	}
	if err := json.Unmarshal([]byte(body), &cluster); err != nil {
		return fmt.Errorf("GET %s/cluster: %w", n.API, err)
	}
	for _, m := range cluster.Members {
		if m.Role == "sync_standby" && (m.State == "running" || m.State == "streaming") {
			return nil
		}
	}
	return fmt.Errorf("etcd records no synchronous standby of %s yet: %s", n.Name, body)
}

// Switchover asks the primary's REST API for a planned switchover to the standby to
// (POST /switchover), which Patroni performs before it answers: the primary is shut down
// once its standby has every transaction, and the standby promoted.
func (c *Patroni) Switchover(to *PatroniNode) error {
	p, err := c.Primary()
	if err != nil {
		return fmt.Errorf("switchover to %s: %w", to.Name, err)
	}
	body := fmt.Sprintf(`{"leader": %q, "candidate": %q}`, p.Name, to.Name)
	status, reply, err := p.rest("POST", "/switchover", body, 60*time.Second)
	if err == nil && status != 200 {
		err = fmt.Errorf("%d %s", status, reply)
	}
	if err != nil {
		return fmt.Errorf("switchover from %s to %s: %w", p.Name, to.Name, err)
	}
	return nil
}

// logTails is the last n lines of each node's log, for an error.
func (c *Patroni) logTails(n int) string {
	var b strings.Builder
	for _, node := range c.Nodes {
		fmt.Fprintf(&b, "\n%s (Patroni and PostgreSQL) log, last lines:\n%s", node.Name, node.log.Tail(n))
	}
	return b.String()
}

// readWrite checks that the node takes a read-write connection within 2 s.
func (n *PatroniNode) readWrite() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.cluster.dsn(n.Addr, "&target_session_attrs=read-write"))
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return conn.Close(ctx)
}

// query runs sql on the node (5 s at most) and scans its one row into dest.
func (n *PatroniNode) query(sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.DSN())
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
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
