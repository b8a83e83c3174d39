package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestIsUnavailableIdleInTransaction: PostgreSQL ends the session of a transaction that waited
// on its client past idle_in_transaction_session_timeout, as it does to a batch leader frozen
// between its statements and COMMIT (order.IdleInTransactionTimeout; TestLeaderPausedMidTransaction in
// internal/chaos). What the client gets when it sends COMMIT then is unavailable: answered
// 503, nothing written, not a 500.
func TestIsUnavailableIdleInTransaction(t *testing.T) {
	t.Parallel()
	sqlDB, err := testenv.Postgres(t).DB()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL idle_in_transaction_session_timeout = 50"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the client frozen past the limit
	err = tx.Commit()
	if err == nil {
		t.Fatal("COMMIT after the session's idle limit succeeded; want the session ended")
	}
	if !order.IsUnavailable(err) {
		t.Errorf("IsUnavailable(%v) = false, want true: the session was ended, nothing was written", err)
	}
}
