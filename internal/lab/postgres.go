package lab

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrNoPostgres is the postgres locks' error in a Locks made without a database
// (Clients.Postgres): a program's mistake, never the API's, which always has one.
var ErrNoPostgres = errors.New("lab: no PostgreSQL for the postgres locks")

// ErrSessionLost is the release error of a postgres lock whose session ended while it was
// held (PostgreSQL then freed the lock): the holder's unlock found no lock to give back.
var ErrSessionLost = errors.New("lab: the advisory lock's session ended while held")

// statementTimeout bounds each statement of a postgres lock on its session. A statement
// without an answer by then leaves the session in doubt, so the session is closed, which
// frees any lock it held.
const statementTimeout = 5 * time.Second

// tryLock takes the advisory lock named by $1 if it is free, and, only then, a fence from
// the lab_lock_fence sequence (db/migrations): NULL when the lock is held elsewhere. One
// statement, so that no holder ever has the lock without its fence. hashtextextended maps
// the lock's key to the advisory lock's 64-bit id; advisory locks are database-wide, and the
// key carries the processes' Redis prefix, so two labs never share one.
const tryLock = `SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN nextval('lab_lock_fence') END`

// postgresLock is the database as a lock: a session-level advisory lock, tried every 2 to 32
// ms until wait ends on a connection of the pool that the holder keeps until its unlock, with
// a number from the lab_lock_fence sequence taken in the same statement (docs/lab.md, "The
// database as a lock"). The postgres lock hands the number to the holder as its fence;
// postgres-nofence only names the grant with it. Neither tells its holder when its session
// ends. The lock writes a name tag to Redis at key, "<pid>:<fence>", as the etcd lock does.
func (l *Locks) postgresLock(ctx context.Context, key string, wait time.Duration, fenced bool) (Held, error) {
	if l.pg == nil {
		return Held{}, ErrNoPostgres
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var (
		conn  *sql.Conn
		fence int64
	)
	tried, err := spin(wctx, func() (bool, error) {
		c, err := l.pg.Conn(wctx)
		if err != nil {
			if wctx.Err() != nil {
				return false, nil // the pool had no connection in time: not had in time
			}
			return false, err
		}
		sctx, cancel := context.WithTimeout(command(ctx), statementTimeout)
		defer cancel()
		var f sql.NullInt64
		if err := c.QueryRowContext(sctx, tryLock, key).Scan(&f); err != nil {
			discard(c) // the lock may have been taken: ending the session frees it
			return false, fmt.Errorf("try advisory lock: %w", err)
		}
		if !f.Valid {
			return false, c.Close()
		}
		conn, fence = c, f.Int64
		return true, nil
	})
	if err != nil {
		return Held{}, err
	}
	tag := l.owner + strconv.FormatInt(fence, 10)
	_ = l.rdb.Set(command(ctx), key, tag, tagTTL).Err()
	h := Held{Token: tag, Tried: tried, release: func(ctx context.Context) error {
		_ = compareAndDelete.Run(ctx, l.rdb, []string{key}, tag).Err()
		return unlock(ctx, conn, key)
	}}
	if fenced {
		h.Fence = fence
	}
	return h, nil
}

// unlock gives back the advisory lock on key that conn's session holds, and returns conn to
// the pool. A session whose unlock did not say it gave the lock back (it held none,
// ErrSessionLost, or no answer came) is closed instead: back in the pool, a session still
// holding the lock would hand it to the next buyer it serves, since a session may take its
// own advisory lock again.
func unlock(ctx context.Context, conn *sql.Conn, key string) error {
	sctx, cancel := context.WithTimeout(ctx, statementTimeout)
	defer cancel()
	var released bool
	err := conn.QueryRowContext(sctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key).Scan(&released)
	switch {
	case err != nil:
		discard(conn)
		return fmt.Errorf("advisory unlock: %w", err)
	case !released:
		discard(conn)
		return fmt.Errorf("advisory unlock: %w", ErrSessionLost)
	}
	return conn.Close()
}

// discard closes conn's session instead of returning it to the pool.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
