package order

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

// IsUnavailable reports whether err means PostgreSQL or Redis is down for a while.
func IsUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		class := pgErr.Code[:2]
		return class == "08" || class == "57" || class == "53" || // connection, shutdown, resources
			pgErr.Code == "25P03" // idle_in_transaction_session_timeout: IdleInTransactionTimeout ended its session
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	return errors.As(err, &netErr) || errors.As(err, &connErr) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.SafeToRetry(err) || redisUnavailable(err)
}

// redisUnavailable reports whether err is a Redis error reply saying the server cannot serve now
// but will (LOADING, READONLY, MASTERDOWN, BUSY, OOM, MISCONF, NOREPLICAS, CLUSTERDOWN, TRYAGAIN,
// a MOVED or ASK the cluster client gave up on, max clients), also from inside a script, or a
// client without a connection (pool timeout, closed). Anything else is a bug or a
// misconfiguration; see docs/failures.md (Redis answers with an error reply).
func redisUnavailable(err error) bool {
	return redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsMasterDownError(err) ||
		redis.IsOOMError(err) || redis.IsNoReplicasError(err) || redis.IsClusterDownError(err) ||
		redis.IsTryAgainError(err) || redis.IsMaxClientsError(err) || redirected(err) ||
		// BUSYKEY and BUSYGROUP are rules of the data, hence the space.
		redis.HasErrorPrefix(err, "BUSY ") || redis.HasErrorPrefix(err, "MISCONF ") ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrPoolExhausted) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, dlock.ErrClosed)
}

// redirected reports whether err is a MOVED or ASK reply.
func redirected(err error) bool {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	return moved || ask
}
