//go:build linux

package chaos_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestRedisSlowOrUnreachable: two API processes reach Redis through a TCP proxy of the
// test's. Mid-sale the proxy first delays every chunk by 150ms each way, so that a lock
// renewal's round trip outlasts the 300ms lease; then it cuts every connection and refuses
// new ones; then Redis is reachable again. While Redis is slow or gone the answers are 201,
// 409 or a clean 503 busy / unavailable with Retry-After — never a 500, never a hang — and
// once Redis is back both processes are ready again and the sale finishes.
func TestRedisSlowOrUnreachable(t *testing.T) {
	faultTest(t)
	b, _ := sharedBackend(t)
	px := testenv.StableProxy(t, b.redis)
	apis := b.startAPIs(t, 2, map[string]string{"REDIS_ADDR": px.Addr(), "LOCK_TTL": "300ms", "LOCK_WAIT": "1s"})
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 60, thinkMS: 20})
	s.start(6, apis...)
	s.waitBought(t, 10)

	phase := func(name string, fault func(), settle func() bool) {
		before, start := s.counts(), time.Now()
		fault()
		testenv.Eventually(t, 10*time.Second, "answers while Redis is "+name, settle)
		t.Logf("while Redis was %s: %s; slowest answer %v", name, diff(s.counts(), before), s.slowest(start))
	}
	answered := func(n int) func() bool {
		start := len(s.answersSnapshot())
		return func() bool { return len(s.answersSnapshot()) >= start+n }
	}
	phase("slow (150ms each way)", func() { px.SetLatency(150 * time.Millisecond) }, answered(12))
	phase("unreachable (connections cut, new ones refused)", px.Down, more(s, outcomeUnavailable, 6))
	px.SetLatency(0)
	px.Up(t)
	testenv.Eventually(t, 20*time.Second, "both APIs ready again", func() bool {
		for _, p := range apis {
			if ready(t, p) != nil {
				return false
			}
		}
		return true
	})
	s.finish(t, apis...)
	s.verify(t, apis[1], noneUnanswered)
}

// more returns a condition that holds once n more answers have the outcome than now.
func more(s *sale, outcome string, n int) func() bool {
	start := s.counts()[outcome]
	return func() bool { return s.counts()[outcome] >= start+n }
}

// diff returns the counts in now beyond those in before, as text.
func diff(now, before map[string]int) string {
	d := map[string]int{}
	for k, n := range now {
		if n > before[k] {
			d[k] = n - before[k]
		}
	}
	return formatCounts(d)
}
