package lab_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
)

// TestPostgresLockDiesWithItsSession: the postgres locks are advisory locks that live as long
// as their session. When PostgreSQL ends the holder's session (here pg_terminate_backend, as
// an operator or a dead-client timeout would), the lock is free at once, while its holder is
// told nothing: its context goes on. The next holder has a larger fence (postgres) or none
// (postgres-nofence); the first holder's late release fails, without deleting the next
// holder's name tag.
func TestPostgresLockDiesWithItsSession(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	pg, _ := testenv.Postgres(t).DB()
	l := lab.New(rdb, lab.Clients{Postgres: pg})
	ctx := context.Background()
	for i, tc := range []struct {
		lock   string
		fenced bool
	}{{"postgres", true}, {"postgres-nofence", false}} {
		t.Run(tc.lock, func(t *testing.T) {
			key := prefix + ":{pg:" + strconv.Itoa(i) + "}:lock"
			first, err := l.Acquire(ctx, tc.lock, key, time.Second, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := first.Fence > 0; got != tc.fenced {
				t.Errorf("fence %d: fenced %v, want %v", first.Fence, got, tc.fenced)
			}
			if v := rdb.Get(ctx, key).Val(); v != first.Token || len(v) <= len(lab.Owner(os.Getpid())) {
				t.Errorf("name tag %q, want the grant's token %q", v, first.Token)
			}
			if _, err := l.Acquire(ctx, tc.lock, key, time.Second, 50*time.Millisecond); !errors.Is(err, dlock.ErrNotObtained) {
				t.Fatalf("second acquire while held = %v, want ErrNotObtained", err)
			}
			// The holder's session ends; PostgreSQL frees its advisory lock with it.
			var ended bool
			if err := pg.QueryRowContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
				WHERE locktype = 'advisory' AND granted AND objsubid = 1
				AND (classid::bigint << 32 | objid::bigint) = hashtextextended($1, 0)`, key).Scan(&ended); err != nil || !ended {
				t.Fatalf("terminate the holder's session: %v, %v", ended, err)
			}
			next, err := l.Acquire(ctx, tc.lock, key, time.Second, 2*time.Second)
			if err != nil {
				t.Fatalf("acquire once the holder's session ended: %v", err)
			}
			defer next.Release(ctx)
			if first.Ctx.Err() != nil {
				t.Errorf("the first holder was told of its loss (%v): want it told nothing", context.Cause(first.Ctx))
			}
			if tc.fenced && next.Fence <= first.Fence {
				t.Errorf("next holder's fence %d, want more than %d", next.Fence, first.Fence)
			}
			if err := first.Release(ctx); err == nil {
				t.Error("the late release of a lock whose session ended succeeded")
			}
			if v := rdb.Get(ctx, key).Val(); v != next.Token {
				t.Errorf("after the late release the name tag is %q, want the next holder's %q", v, next.Token)
			}
		})
	}
}

// TestPostgresLockWithoutADatabase: Locks made without a pool refuse the postgres locks with
// ErrNoPostgres.
func TestPostgresLockWithoutADatabase(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	_, err := lab.New(rdb, lab.Clients{}).Acquire(context.Background(), "postgres", prefix+":{p:1}:lock", time.Second, time.Second)
	if !errors.Is(err, lab.ErrNoPostgres) {
		t.Errorf("postgres lock without a database = %v, want ErrNoPostgres", err)
	}
}
