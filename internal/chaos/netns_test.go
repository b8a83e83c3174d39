//go:build linux

package chaos_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// The silent partitions (partitionredis_test.go, partitionpg_test.go) put one API process in
// a network namespace of its own and drop its packets to PostgreSQL or Redis there, with no
// RST and no ICMP: the process hears nothing, as across a network that lost its packets.

// cutProc is an API process in a network namespace of its own (servers.StartNetns): it
// reaches PostgreSQL and Redis through forwarders of the test's on the namespace's host end,
// which the test can partition it from (ns.Partition(p.pg), ns.Partition(p.redis)).
type cutProc struct {
	*apiProc
	ns    *servers.Netns
	pg    string // the forwarder to PostgreSQL: the process's DATABASE_URL host
	redis string // the forwarder to Redis: its REDIS_ADDR
}

// startInNetns starts an API process named name with env (see apiEnv) in a namespace of its
// own, on b's Redis and on the PostgreSQL at dsn (b's, or a proxy of the test's in front of
// it), both reached through forwarders; it waits until the process is ready.
func (b backend) startInNetns(t *testing.T, name, dsn string, env map[string]string) *cutProc {
	t.Helper()
	ns := servers.StartNetns(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("DATABASE_URL must be a postgres:// URL for this test: %v", err)
	}
	p := &cutProc{ns: ns, pg: ns.Forward(u.Host), redis: ns.Forward(b.redis)}
	u.Host = p.pg
	e := b.apiEnv(env)
	e["DATABASE_URL"], e["REDIS_ADDR"] = u.String(), p.redis
	p.apiProc = servers.StartAPIIn(t, ns, name, e)
	return p
}

// patient bounds one purchase, client side, for buyers of a partitioned process: longer than
// the longest a purchase may take, its deadline (PURCHASE_TIMEOUT 2s in these tests) and
// order.AfterDeadline (10s, a COMMIT that got no answer and asking PostgreSQL what became of
// it), so that a process that never answers shows as one.
const patient = 30 * time.Second

// partitionFor is how long a partition lasts: past the lock's lease (LOCK_TTL 500ms), the
// Redis client's read timeout (3s) and a queued purchase's claim time (5s).
const partitionFor = 8 * time.Second

// awaitAnswered waits until every purchase of s sent to target so far is answered (within
// patient): a fault's phase is summed up once its last purchase is.
func (s *sale) awaitAnswered(t *testing.T, target string) {
	t.Helper()
	last := s.nextUser.Load()
	testenv.Eventually(t, patient, "the purchases sent to "+target+" answered", func() bool {
		for _, u := range s.inflightUsers(target) {
			if u <= last {
				time.Sleep(10 * time.Millisecond)
				return false
			}
		}
		return true
	})
}

// phase is what a process answered during a fault: the purchases of a sale answered from
// its onset on and sent before it ended.
type phase struct {
	counts  map[string]int
	noticed time.Duration // from the onset to the first answer of a purchase that failed (5xx, no answer)
	slowest time.Duration // the longest a purchase took
	failed  bool          // whether any failed
}

// answersOf sums up the answers target gave to purchases of s sent before to and answered
// from from on.
func (s *sale) answersOf(target string, from, to time.Time) phase {
	ph := phase{counts: map[string]int{}}
	answers := s.answersSnapshot()
	slices.SortFunc(answers, func(a, b answer) int { return a.done.Compare(b.done) })
	for _, a := range answers {
		if a.target != target || a.done.Before(from) || !a.sent.Before(to) {
			continue
		}
		ph.counts[a.outcome()]++
		ph.slowest = max(ph.slowest, a.done.Sub(a.sent))
		if (a.status == 0 || a.status >= 500) && !ph.failed {
			ph.failed, ph.noticed = true, a.done.Sub(from)
		}
	}
	return ph
}

func (ph phase) String() string {
	noticed := "never failed"
	if ph.failed {
		noticed = "first failure " + ph.noticed.Round(time.Millisecond).String() + " after the onset"
	}
	return formatCounts(ph.counts) + "; " + noticed + ", slowest " + ph.slowest.Round(time.Millisecond).String()
}

// soldBy counts the 201 and 202 answers of the processes other than target to purchases of s
// sent between from and to.
func (s *sale) soldBy(notTarget string, from, to time.Time) int {
	n := 0
	for _, a := range s.answersSnapshot() {
		if a.target != notTarget && !a.sent.Before(from) && a.sent.Before(to) &&
			(a.status == http.StatusCreated || a.status == http.StatusAccepted) {
			n++
		}
	}
	return n
}

// sellsAgain waits until p sells a unit of s again (201 or 202 to a purchase sent from
// since on) and returns how long after since it did.
func (s *sale) sellsAgain(t *testing.T, p *apiProc, since time.Time) time.Duration {
	t.Helper()
	var at time.Time
	defer func() {
		if at.IsZero() { // Eventually failed: say what p answered meanwhile
			t.Logf("%s answered since: %s; in flight: %d", p.Name, s.answersOf(p.Name, since, time.Now()), len(s.inflightUsers(p.Name)))
		}
	}()
	testenv.Eventually(t, 30*time.Second, p.Name+" sells "+s.strategy+" again", func() bool {
		for _, a := range s.answersSnapshot() {
			if a.target == p.Name && !a.sent.Before(since) && (a.status == http.StatusCreated || a.status == http.StatusAccepted) {
				at = a.done
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
		return false
	})
	return at.Sub(since)
}
