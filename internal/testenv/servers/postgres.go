package servers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Postgres is a PostgreSQL cluster of the test's own, run as the postgres OS user (PostgreSQL
// refuses root), without durability (fsync off). StopFast and Start may be called in any
// order; it is stopped and removed when the test ends. It is safe for concurrent use.
type Postgres struct {
	t    testing.TB
	port string
	argv []string
	attr *syscall.SysProcAttr
	log  *Buffer

	mu   sync.Mutex
	proc *process // nil while stopped
}

// StartPostgres initdbs a cluster in a temporary directory and starts it on a free loopback
// port. It skips the test when not root, when there is no postgres OS user, or when
// PostgreSQL's server binaries are missing ($PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin).
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bindir := pgBinDir(t)
	cred := postgresUser(t)
	dir, err := os.MkdirTemp("", "servers-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	attr := &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	initdb := exec.Command(filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Env, initdb.SysProcAttr = []string{"LC_ALL=C"}, attr
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	c := &Postgres{t: t, port: port, attr: attr, log: &Buffer{},
		argv: []string{filepath.Join(bindir, "postgres"), "-D", data, "-p", port,
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=40", "-c", "shared_buffers=16MB"}}
	t.Cleanup(func() {
		c.stop(syscall.SIGQUIT) // immediate shutdown: the data is thrown away
		if t.Failed() {
			t.Logf("postgres log (last lines):\n%s", c.log.Tail(30))
		}
	})
	c.Start()
	return c
}

// DSN is the URL of the cluster's postgres database (user postgres, no password).
func (c *Postgres) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable", c.port)
}

// Start starts the server and waits up to 30 s until it accepts connections. It does nothing
// while the server runs.
func (c *Postgres) Start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env, cmd.SysProcAttr = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}, c.attr
	proc, err := startProcess(cmd, c.log)
	if err != nil {
		c.t.Fatalf("start postgres: %v", err)
	}
	c.proc = proc
	deadline := time.Now().Add(30 * time.Second)
	for !c.accepts() {
		if proc.exited() || time.Now().After(deadline) {
			c.t.Fatalf("PostgreSQL on port %s does not accept connections (exited: %v); log:\n%s",
				c.port, proc.exited(), c.log.Tail(30))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// accepts reports whether a connection to the cluster succeeds within a second.
func (c *Postgres) accepts() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, c.DSN())
	if err != nil {
		return false
	}
	conn.Close(ctx)
	return true
}

// StopFast is `pg_ctl stop -m fast`: sessions are terminated, open transactions roll back.
func (c *Postgres) StopFast() { c.stop(syscall.SIGINT) }

// stop sends sig and waits for the server to exit (SIGKILL after 10s, failing the test).
func (c *Postgres) stop(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return
	}
	if !c.proc.stop(sig, 10*time.Second) {
		c.t.Errorf("postgres did not stop within 10s of %v", sig)
	}
	c.proc = nil
}

// pgBinDir finds PostgreSQL's server binaries: $PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin (where Debian and `make up` put them).
func pgBinDir(t testing.TB) string {
	t.Helper()
	dirs := []string{os.Getenv("PG_BINDIR")}
	if dirs[0] == "" {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) > pgMajor(found[j]) })
		dirs = found
	}
	for _, d := range dirs {
		if fileExists(filepath.Join(d, "initdb")) && fileExists(filepath.Join(d, "postgres")) {
			return d
		}
	}
	t.Skip("PostgreSQL server binaries (initdb, postgres) not found: set PG_BINDIR or run `make up` as root")
	return ""
}

func pgMajor(bindir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return n
}

// postgresUser returns the credential of the postgres OS user, or skips the test.
func postgresUser(t testing.TB) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a PostgreSQL cluster as the postgres user")
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("no postgres OS user to run a PostgreSQL cluster as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
