package servers

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/launch"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// SentinelDownAfter is how long the master must go unanswered before a sentinel thinks it
// down (see launch.SentinelDownAfter).
const SentinelDownAfter = launch.SentinelDownAfter

// SentinelOptions are the passwords of a Sentinel deployment; the zero value has none.
type SentinelOptions = launch.SentinelOptions

// Sentinels is a Redis Sentinel deployment of the test's own (see launch.Sentinels): a
// master, its replica behind a fault proxy (Link), three sentinels. Every process of it is
// killed when the test ends. It is safe for concurrent use.
type Sentinels struct {
	*launch.Sentinels
	Master  *Redis            // the master at the start
	Replica *Redis            // its replica, the one a failover promotes
	Link    *faultproxy.Proxy // the replica's connection to Master: HoldBackReplica stalls it
}

// StartSentinels starts a master, its replica and three sentinels watching the master as
// "seckill", and waits until a failover can happen (see launch.StartSentinels). opt may be
// nil.
func StartSentinels(t T, opt *SentinelOptions) *Sentinels {
	t.Helper()
	d, err := launch.StartSentinels(opt)
	check(t, err)
	closeAtEnd(t, "the Sentinel deployment", d.Close)
	return &Sentinels{Sentinels: d, Master: &Redis{Redis: d.Master, t: t}, Replica: &Redis{Redis: d.Replica, t: t},
		Link: &faultproxy.Proxy{Proxy: d.Link}}
}

// HoldBackReplica waits until the replica has every write the master took so far, then
// stalls the replication link (see launch.Sentinels.HoldBackReplica).
func (d *Sentinels) HoldBackReplica(t T) {
	t.Helper()
	must(t, d.Sentinels.HoldBackReplica())
}

// ForceFailover asks a sentinel to fail over now (see launch.Sentinels.ForceFailover).
func (d *Sentinels) ForceFailover(t T) {
	t.Helper()
	must(t, d.Sentinels.ForceFailover())
}

// AwaitFailover waits up to within until every sentinel reports a master other than from,
// and that master says it is one (ROLE), and returns its address.
func (d *Sentinels) AwaitFailover(t T, from string, within time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	to, err := d.WaitFailover(ctx, from)
	if err != nil {
		t.Fatalf("%v\n%s", err, d.Logs())
	}
	return to
}
