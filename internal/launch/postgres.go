package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Postgres is a PostgreSQL cluster of the caller's own, run as the postgres OS user
// (PostgreSQL refuses root), without durability (fsync off). StopFast and Start may be called
// in any order; Close stops it and removes it. It is safe for concurrent use.
type Postgres struct {
	dir  string
	port string
	argv []string
	attr *syscall.SysProcAttr
	log  *Buffer

	mu   sync.Mutex
	proc *Process // nil while stopped
}

// StartPostgres initdbs a cluster in a temporary directory and starts it on a free loopback
// port. It returns an error wrapping ErrUnavailable when not root, when there is no postgres
// OS user, or when PostgreSQL's server binaries are missing ($PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin). The caller owns it: Close.
func StartPostgres() (_ *Postgres, err error) {
	bindir, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := postgresUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "launch-pg-")
	if err != nil {
		return nil, err
	}
	attr := &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	c := &Postgres{dir: dir, attr: attr, log: &Buffer{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
		}
	}()
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Env, initdb.SysProcAttr = []string{"LC_ALL=C"}, attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// Another program (go test runs packages in parallel) may bind the port FreeAddr found
	// free before the server does: the server then exits saying so, and another is tried.
	for try := 1; ; try++ {
		addr, err := pgAddr()
		if err != nil {
			return nil, err
		}
		_, c.port, _ = net.SplitHostPort(addr)
		c.argv = []string{filepath.Join(bindir, "postgres"), "-D", data, "-p", c.port,
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=40", "-c", "shared_buffers=16MB"}
		mark := len(c.log.String())
		err = c.Start()
		if err == nil {
			return c, nil
		}
		if try == 3 || !strings.Contains(c.log.String()[mark:], "already in use") {
			return nil, err
		}
		_ = c.stop(syscall.SIGQUIT) // exited already: forget it
	}
}

// Close stops the server at once (SIGQUIT: immediate shutdown, the data is thrown away) and
// removes its directory.
func (c *Postgres) Close() error {
	return errors.Join(c.stop(syscall.SIGQUIT), os.RemoveAll(c.dir))
}

// Log is what the server printed, across its restarts.
func (c *Postgres) Log() *Buffer { return c.log }

// DSN is the URL of the cluster's postgres database (user postgres, no password).
func (c *Postgres) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable", c.port)
}

// Start starts the server and waits up to 30 s until it accepts connections. It does nothing
// while the server runs.
func (c *Postgres) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return nil
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env, cmd.SysProcAttr = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}, c.attr
	proc, err := StartProcess(cmd, c.log)
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	c.proc = proc
	deadline := time.Now().Add(30 * time.Second)
	for !c.accepts() {
		if proc.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("PostgreSQL on port %s does not accept connections (exited: %v); log:\n%s",
				c.port, proc.Exited(), c.log.Tail(30))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
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
// It returns an error if the server did not stop within 10 s (it is killed then).
func (c *Postgres) StopFast() error { return c.stop(syscall.SIGINT) }

// stop sends sig and waits for the server to exit (SIGKILL after 10s, and an error).
func (c *Postgres) stop(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil
	}
	defer func() { c.proc = nil }()
	if !c.proc.Stop(sig, 10*time.Second) {
		return fmt.Errorf("postgres did not stop within 10s of %v", sig)
	}
	return nil
}

// pgAddr picks the address of a new cluster (a variable so that a test can hand out a taken
// one first).
var pgAddr = FreeAddr

// pgBinDir finds PostgreSQL's server binaries: $PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin (where Debian and `make up` put them).
func pgBinDir() (string, error) {
	dirs := []string{os.Getenv("PG_BINDIR")}
	if dirs[0] == "" {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) > pgMajor(found[j]) })
		dirs = found
	}
	for _, d := range dirs {
		if fileExists(filepath.Join(d, "initdb")) && fileExists(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", unavailable("PostgreSQL server binaries (initdb, postgres) not found: set PG_BINDIR or run `make up` as root")
}

func pgMajor(bindir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return n
}

// postgresUser returns the credential of the postgres OS user, or an error wrapping
// ErrUnavailable.
func postgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, unavailable("needs root to run a PostgreSQL cluster as the postgres user")
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, unavailable("no postgres OS user to run a PostgreSQL cluster as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
