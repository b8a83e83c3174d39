package servers

import "github.com/seckill/seckill/internal/launch"

// Postgres is a PostgreSQL cluster of the test's own (see launch.Postgres), stopped and
// removed when the test ends. It is safe for concurrent use.
type Postgres struct {
	*launch.Postgres
	t T
}

// StartPostgres initdbs a cluster in a temporary directory and starts it on a free loopback
// port (see launch.StartPostgres). It skips the test when not root, when there is no postgres
// OS user, or when PostgreSQL's server binaries are missing. When the test ends the cluster
// is thrown away, and the tail of its log printed if the test failed.
func StartPostgres(t T) *Postgres {
	t.Helper()
	c, err := launch.StartPostgres()
	check(t, err)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close PostgreSQL: %v", err)
		}
		if t.Failed() {
			t.Logf("postgres log (last lines):\n%s", c.Log().Tail(30))
		}
	})
	return &Postgres{Postgres: c, t: t}
}

// Start starts the server and waits up to 30 s until it accepts connections, failing the
// test otherwise. It does nothing while the server runs.
func (c *Postgres) Start() {
	c.t.Helper()
	must(c.t, c.Postgres.Start())
}

// StopFast is `pg_ctl stop -m fast`: sessions are terminated, open transactions roll back.
// The test fails if the server does not stop within 10 s.
func (c *Postgres) StopFast() {
	if err := c.Postgres.StopFast(); err != nil {
		c.t.Error(err)
	}
}
