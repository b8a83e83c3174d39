package servers

import "github.com/seckill/seckill/internal/launch"

// PgBouncer is a pgbouncer of the test's own (see launch.PgBouncer), stopped when the test ends.
type PgBouncer struct {
	*launch.PgBouncer
}

// PgBouncerOptions configures StartPgBouncer (see launch.PgBouncerOptions).
type PgBouncerOptions = launch.PgBouncerOptions

// StartPgBouncer starts pgbouncer in transaction pooling mode in front of the database dsn
// names (see launch.StartPgBouncer). It skips the test when pgbouncer is missing or the test
// does not run as root (and fails it instead under SECKILL_REQUIRE_ALL, see package missing).
// When the test ends pgbouncer is stopped, and the tail of its log printed if the test failed.
func StartPgBouncer(t T, dsn string, o PgBouncerOptions) *PgBouncer {
	t.Helper()
	b, err := launch.StartPgBouncer(dsn, o)
	check(t, err)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close pgbouncer: %v", err)
		}
		if t.Failed() {
			t.Logf("pgbouncer log (last lines):\n%s", b.Log().Tail(30))
		}
	})
	return &PgBouncer{PgBouncer: b}
}
