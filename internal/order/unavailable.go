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

// IsUnavailable reports whether err means PostgreSQL or Redis could not be reached, went away,
// or refused to serve for a while, as opposed to a bug or a rule of the data: such a failure
// is answered "retry shortly", never as a server error. It sees through wrapping (fmt.Errorf's
// %w, errors.Join), and so through the lock's and the gate's errors. A lock whose store is not
// Redis (etcd) reports its outages wrapped in ErrUnavailable instead (see Locker).
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

// redisUnavailable reports whether err is a Redis error reply that says the server cannot
// serve now but will (a reply is no network error, so the checks above miss it), or a
// client that cannot get or no longer has a connection:
//   - LOADING: it is loading its dataset (at start, or a replica's full sync);
//   - READONLY: it is a replica now (a failover, or an address that moved to a replica);
//   - MASTERDOWN: a replica whose master is gone, with replica-serve-stale-data no;
//   - BUSY: a script, function or module command runs past busy-reply-threshold;
//   - OOM: maxmemory is reached and the policy evicts nothing (or nothing more);
//   - MISCONF: it refuses writes after a failed RDB snapshot (a full or failing disk);
//   - NOREPLICAS: fewer replicas than min-replicas-to-write are connected;
//   - CLUSTERDOWN: a slot is not served (the cluster is down or being reconfigured);
//   - TRYAGAIN: a multi-key command on a slot being migrated between nodes;
//   - MOVED or ASK that reaches the caller: a cluster client followed its redirects and
//     gave up (nodes that disagree on who owns a slot, in the middle of a reshard);
//   - ERR max number of clients reached: maxclients refused the connection;
//   - the client's pool timed out or is exhausted, or the client (or the lock client) is
//     closed because the process is shutting down.
//
// A reply raised by a command inside a script keeps its prefix on Redis 7 ("OOM command not
// allowed ... script: <sha>, on @user_script:15."), so the lock's and the gate's scripts
// are covered. Anything else, such as a script's own ERR, WRONGTYPE, NOSCRIPT, CROSSSLOT or
// NOAUTH, is a bug or a misconfiguration.
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
