//go:build linux

package chaos_test

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
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seckill/seckill/internal/testenv"
)

// server is a child process the test can stop and start again on the same port.
type server struct {
	name string
	argv []string
	attr *syscall.SysProcAttr
	log  *testenv.Buffer
	cmd  *exec.Cmd
	done chan struct{}
}

func (s *server) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = s.attr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", s.name, err)
	}
	done := make(chan struct{})
	s.cmd, s.done = cmd, done
	go func() { _ = cmd.Wait(); close(done) }()
}

// stop sends sig and waits for the process to exit (SIGKILL after 10s).
func (s *server) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Errorf("%s did not stop within 10s of %v", s.name, sig)
	}
	s.cmd = nil
}

// pgCluster is a PostgreSQL cluster of the test's own, run as the postgres OS user.
type pgCluster struct {
	server
	dir  string
	port string
}

// newPGCluster initdbs a cluster in a temporary directory and starts it on a free loopback
// port (fsync off); it is stopped and removed when the test ends. It skips when not root,
// when there is no postgres OS user, or when PostgreSQL's binaries are missing.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	bindir := pgBinDir(t)
	cred := postgresUser(t)
	dir, err := os.MkdirTemp("", "chaos-pg-")
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
	_, port, _ := net.SplitHostPort(testenv.FreeAddr(t))
	c := &pgCluster{dir: dir, port: port, server: server{name: "postgres", log: &testenv.Buffer{}, attr: attr,
		argv: []string{filepath.Join(bindir, "postgres"), "-D", data, "-p", port,
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=40", "-c", "shared_buffers=16MB"}}}
	c.Start(t)
	t.Cleanup(func() {
		c.stop(t, syscall.SIGQUIT) // immediate shutdown: the data is thrown away
		if t.Failed() {
			t.Logf("postgres log (last lines):\n%s", c.log.Tail(30))
		}
	})
	return c
}

// DSN is the URL of the cluster's postgres database.
func (c *pgCluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable", c.port)
}

// Start starts the server and waits until it accepts connections.
func (c *pgCluster) Start(t *testing.T) {
	t.Helper()
	c.start(t)
	waitFor(t, 30*time.Second, "PostgreSQL accepts connections", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn, err := pgconn.Connect(ctx, c.DSN())
		if err != nil {
			return false
		}
		conn.Close(ctx)
		return true
	})
}

// StopFast is `pg_ctl stop -m fast`: sessions are terminated, open transactions roll back.
func (c *pgCluster) StopFast(t *testing.T) { c.stop(t, syscall.SIGINT) }

// pgBinDir finds PostgreSQL's server binaries: $PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin (where Debian and `make up` put them).
func pgBinDir(t *testing.T) string {
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

// postgresUser returns the credential of the postgres OS user; PostgreSQL refuses root.
func postgresUser(t *testing.T) *syscall.Credential {
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
