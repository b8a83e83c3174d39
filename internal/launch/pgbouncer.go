package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PgBouncer is a pgbouncer process of the caller's own in front of one PostgreSQL database,
// run as the postgres OS user (pgbouncer refuses root), with its configuration in a temporary
// directory. The caller closes it.
type PgBouncer struct {
	Addr string // 127.0.0.1:port where clients connect

	dir            string
	first          string // the first pool's name
	user, password string
	proc           *Process
	log            *Buffer
}

// PgBouncerOptions configures StartPgBouncer. The zero value means the documented defaults.
type PgBouncerOptions struct {
	// Pools names the databases clients connect to, each to the target database with the
	// pool size given (0: PoolSize). Default: one, named as the target database.
	Pools map[string]int
	// PoolSize is default_pool_size, the server connections of one pool. Default: 4.
	PoolSize int
	// Settings are lines of pgbouncer.ini's [pgbouncer] section, included after the
	// launcher's own (pool_mode = transaction among them), which they override.
	Settings string
}

// StartPgBouncer starts pgbouncer on a free loopback port in front of the database that dsn
// names (host, port, database, user and password; a search_path there is set on each server
// connection by connect_query, since PgBouncer passes no such startup parameter on), and
// waits up to 10 s until it accepts connections. It returns an error wrapping ErrUnavailable
// when pgbouncer is missing or this program is not root.
func StartPgBouncer(dsn string, o PgBouncerOptions) (_ *PgBouncer, err error) {
	bin, err := pgBouncerBin()
	if err != nil {
		return nil, err
	}
	cred, err := postgresUser()
	if err != nil {
		return nil, err
	}
	target, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer's target: %w", err)
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 4
	}
	if len(o.Pools) == 0 {
		o.Pools = map[string]int{target.Database: 0}
	}
	names := make([]string, 0, len(o.Pools))
	for name := range o.Pools {
		names = append(names, name)
	}
	sort.Strings(names)
	dir, err := os.MkdirTemp("", "launch-pgbouncer-")
	if err != nil {
		return nil, err
	}
	b := &PgBouncer{dir: dir, first: names[0], user: target.User, password: target.Password, log: &Buffer{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Close())
		}
	}()
	auth := "scram-sha-256"
	if target.Password == "" {
		auth = "trust"
	}
	userlist := fmt.Sprintf("%q %q\n", target.User, target.Password)
	if err := writeOwned(dir, "userlist.txt", userlist, cred); err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		if b.Addr, err = FreeAddr(); err != nil {
			return nil, err
		}
		_, port, _ := net.SplitHostPort(b.Addr)
		ini := pgBouncerINI(target, o, names, auth, filepath.Join(dir, "userlist.txt"), port)
		if err := writeOwned(dir, "pgbouncer.ini", ini, cred); err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		mark := len(b.log.String())
		if b.proc, err = StartProcess(cmd, b.log); err != nil {
			return nil, fmt.Errorf("start pgbouncer: %w", err)
		}
		if err = b.awaitListening(10 * time.Second); err == nil {
			return b, nil
		}
		if try == 3 || !strings.Contains(b.log.String()[mark:], "in use") {
			return nil, err
		}
		b.proc.Stop(syscall.SIGTERM, 5*time.Second)
	}
}

// pgBouncerINI is the configuration: a pool per name of o.Pools, then o.Settings.
func pgBouncerINI(target *pgconn.Config, o PgBouncerOptions, names []string, auth, userlist, port string) string {
	var w strings.Builder
	w.WriteString("[databases]\n")
	for _, name := range names {
		fmt.Fprintf(&w, "%s = host=%s port=%d dbname=%s", name, target.Host, target.Port, target.Database)
		if n := o.Pools[name]; n > 0 {
			fmt.Fprintf(&w, " pool_size=%d", n)
		}
		if sp := target.RuntimeParams["search_path"]; sp != "" {
			fmt.Fprintf(&w, " connect_query='SET search_path TO %s'", sp)
		}
		w.WriteString("\n")
	}
	fmt.Fprintf(&w, `[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = %s
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 500
`, port, auth, userlist, o.PoolSize)
	w.WriteString(o.Settings)
	return w.String()
}

// writeOwned writes a file of dir readable by cred's user only.
func writeOwned(dir, name, content string, cred *syscall.Credential) error {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	return os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

// awaitListening waits until a client logs in through pgbouncer (which then opens a server
// connection), or pgbouncer exits.
func (b *PgBouncer) awaitListening(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgconn.Connect(ctx, b.DSN(""))
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		if b.proc.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer on %s does not let a client in (exited: %v): %w; log:\n%s", b.Addr, b.proc.Exited(), err, b.log.Tail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DSN is the URL of pool name through pgbouncer ("": the first pool, alphabetically), with
// the target's user and password.
func (b *PgBouncer) DSN(name string) string {
	if name == "" {
		name = b.first
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(b.user, b.password), Host: b.Addr, Path: "/" + name, RawQuery: "sslmode=disable"}
	return u.String()
}

// Log is what pgbouncer printed.
func (b *PgBouncer) Log() *Buffer { return b.log }

// Close stops pgbouncer at once (SIGTERM: its clients' connections close) and removes its
// directory.
func (b *PgBouncer) Close() error {
	var err error
	if b.proc != nil && !b.proc.Stop(syscall.SIGTERM, 5*time.Second) {
		err = errors.New("pgbouncer did not stop within 5s of SIGTERM")
	}
	return errors.Join(err, os.RemoveAll(b.dir))
}

// pgBouncerBin finds pgbouncer: Debian's package puts it in /usr/sbin.
func pgBouncerBin() (string, error) {
	for _, p := range []string{"pgbouncer", "/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", unavailable("pgbouncer not found: a PgBouncer of its own is started (`make up` installs Debian's pgbouncer)")
}
