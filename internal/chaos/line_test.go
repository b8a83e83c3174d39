//go:build linux

package chaos_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// joinLine gives each of users a place in s's line through targets, in turn, and fails the
// test on an error.
func (s *sale) joinLine(t *testing.T, users []int64, targets ...*apiProc) {
	t.Helper()
	for i, u := range users {
		p := targets[i%len(targets)]
		ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
		pl, err := apiClient(t, p).JoinLine(ctx, s.id, u)
		cancel()
		if err != nil || pl.State != api.PlaceWaiting {
			t.Fatalf("user %d joining through %s: %+v, %v", u, p.Name, pl, err)
		}
	}
}

// placeStates returns how many of users are in each state of s's line, asked through via.
func (s *sale) placeStates(t *testing.T, via *apiProc, users []int64) map[string][]int64 {
	t.Helper()
	c := apiClient(t, via)
	states := map[string][]int64{}
	for _, u := range users {
		ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
		pl, err := c.LinePlace(ctx, s.id, u)
		cancel()
		if err != nil {
			t.Fatalf("user %d's place through %s: %v", u, via.Name, err)
		}
		states[pl.State] = append(states[pl.State], u)
	}
	return states
}

// followLine runs one buyer for each of users, as a client of the line does: it buys, waits as
// Retry-After says while its place is not called (not_your_turn) and a moment while something is
// broken, and asks again, until it is answered a unit, sold_out, already_purchased or
// place_expired, or the sale's time is up. It returns once every buyer is done.
func (s *sale) followLine(users []int64, targets ...*apiProc) {
	g := s.launchWith(0, false, requestTimeout, targets)
	g.wg.Add(len(users))
	for i, u := range users {
		go func() {
			defer g.wg.Done()
			k := i % len(g.targets)
			for s.ctx.Err() == nil && !g.halted.Load() {
				a := g.buyAs(g.targets[k], g.clients[k], u)
				switch {
				case a.status == http.StatusCreated, a.status == http.StatusAccepted,
					a.code == api.CodeSoldOut, a.code == api.CodeAlreadyPurchased, a.code == api.CodePlaceExpired:
					return
				case a.code == api.CodeNotYourTurn:
					wait, err := strconv.Atoi(a.retryAfter)
					if err != nil || wait < 1 {
						wait = 1
					}
					time.Sleep(min(time.Duration(wait)*time.Second, 3*time.Second))
				default:
					time.Sleep(50 * time.Millisecond)
					k = (k + 1) % len(g.targets) // another process, as a client behind a load balancer
				}
			}
		}()
	}
	g.wg.Wait()
}

// TestLineRedisFailover: two API processes find Redis through Sentinel; a redis product with a
// line (docs/api.md#the-line-before-the-start) whose sale starts 20 s after its creation. Buyers
// join; the replica is held back, more join, and the master is killed before the start: the
// sentinels promote the replica, which lacks those later joins. What that costs
// (docs/failures.md#the-line-and-a-redis-failover): those buyers are not in line; they join
// again, before the start, and get a new draw, as good as the lost one. From the start every
// buyer follows its place and buys when called. The sale sells out with every invariant and
// history check of verify; refusals not_your_turn and place_expired are answers that wrote
// nothing.
func TestLineRedisFailover(t *testing.T) {
	log := faultTest(t)
	d := servers.StartSentinels(t, nil)
	holdOutlasts(t, d)
	b := onRedis(t, "127.0.0.1:1") // REDIS_ADDR, overridden by the sentinels: nothing listens there
	apis := b.startAPIs(t, 2, map[string]string{
		"REDIS_SENTINEL_ADDRS": strings.Join(d.Addrs(), ","), "REDIS_SENTINEL_MASTER": d.Name,
		"LOCK_TTL": "1s", "PURCHASE_TIMEOUT": "2s",
	})
	startsAt := time.Now().Add(20 * time.Second).Truncate(time.Millisecond)
	s := newSale(t, apis[0], b.dsn, product{strategy: "redis", stock: 30, startsAt: &startsAt,
		line: &api.Line{Rate: 20, WindowMS: 10_000}})
	s.refusals = map[string]bool{api.CodeNotYourTurn: true, api.CodePlaceExpired: true}
	users := make([]int64, 60)
	for i := range users {
		users[i] = s.nextUser.Add(1)
	}
	early, late := users[:30], users[30:]
	s.joinLine(t, early, apis...)
	master := d.MasterClient()
	ctx := context.Background()
	if n, err := master.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica = %d, %v", n, err)
	}
	d.HoldBackReplica(t)
	stillHeldBack(t, d, "after the hold")
	s.joinLine(t, late, apis...)
	stillHeldBack(t, d, "at the kill")
	d.Master.Stop()
	killed := time.Now()
	if to := d.AwaitFailover(t, d.Master.Addr, 30*time.Second); to != d.Replica.Addr {
		t.Fatalf("the sentinels promoted %s, want the replica %s", to, d.Replica.Addr)
	}
	log("master killed; the sentinels named the replica %v later", time.Since(killed).Round(time.Millisecond))
	var states map[string][]int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		states = s.placeStates(t, apis[1], users) // both processes follow the new master
		if len(states[api.PlaceNotInLine])+len(states[api.PlaceWaiting]) == len(users) || time.Now().After(deadline) {
			break
		}
	}
	lost := states[api.PlaceNotInLine]
	log("after the failover: %d places kept, %d lost", len(states[api.PlaceWaiting]), len(lost))
	if len(states[api.PlaceWaiting]) != len(early) || len(lost) != len(late) {
		t.Errorf("places after the failover: %d waiting, %d not in line; want the %d replicated joins kept and the %d others lost",
			len(states[api.PlaceWaiting]), len(lost), len(early), len(late))
	}
	s.joinLine(t, lost, apis...) // they come back, as a client checking its place does
	if time.Now().After(startsAt) {
		t.Fatalf("the failover and the rejoins ran past the start (%v late): the test tested no pre-queue", time.Since(startsAt))
	}
	time.Sleep(time.Until(startsAt))
	s.followLine(users, apis...)
	log("every buyer done: %s; PostgreSQL stock %d", s.summary(), s.pgStock(t))
	s.inTurn(t, apis[1])
	s.verify(t, apis[1], noneUnanswered)
}

// inTurn fails the test for each 201 answered before its buyer's place was called, by the
// place's called_at read through via (Redis's clock, on this host as the test's).
func (s *sale) inTurn(t *testing.T, via *apiProc) {
	t.Helper()
	c := apiClient(t, via)
	for _, a := range s.answersSnapshot() {
		if a.status != http.StatusCreated {
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
		pl, err := c.LinePlace(ctx, s.id, a.user)
		cancel()
		switch {
		case err != nil || pl.CalledAt == nil:
			t.Errorf("user %d's place: %+v, %v", a.user, pl, err)
		case a.done.Before(*pl.CalledAt):
			t.Errorf("user %d (position %d) was answered 201 at %s, before its place was called at %s",
				a.user, pl.Position, a.done.Format(time.StampMicro), pl.CalledAt.Format(time.StampMicro))
		}
	}
}
