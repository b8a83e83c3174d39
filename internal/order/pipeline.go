package order

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seckill/seckill/db"
)

// runPipelinedTx is runTx for a transaction whose statements need no answer from each other
// on the way: BEGIN and the statements build queues go out in one round trip (a pgx
// pipeline; PostgreSQL still runs them one after the other, each with a snapshot taken when it
// starts), read takes their results, then COMMIT goes out on its own. A batch of the dlock
// strategy costs two round trips this way instead of four. The promises are runTx's: an error
// means nothing was written, unless it wraps errCommitUnknown.
func (c *core) runPipelinedTx(ctx context.Context, build func(b *pgx.Batch), read func(br pgx.BatchResults) error) error {
	conn, err := db.Hold(ctx, c.db) // waiting for a connection is part of the purchase's time
	if err != nil {
		return fmt.Errorf("connection: %w", err)
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeLeft(ctx)+commitTimeout)
	defer cancel()
	return conn.Pgx(func(pc *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		build(b)
		br := pc.SendBatch(ctx, b) // a cancelled ctx closes the connection: no COMMIT will follow
		_, err := br.Exec()
		if err == nil {
			err = read(br)
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			if !pc.IsClosed() {
				_, _ = pc.Exec(cctx, "ROLLBACK")
			}
			return err
		}
		tag, err := pc.Exec(cctx, "COMMIT")
		switch {
		case err == nil && tag.String() == "ROLLBACK":
			return fmt.Errorf("commit: %w", pgx.ErrTxCommitRollback)
		case err == nil:
			return nil
		case notCommitted(err):
			return fmt.Errorf("commit: %w", err)
		}
		return fmt.Errorf("%w: %w", errCommitUnknown, err)
	})
}

//
