package loadgen

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
)

// lineRun is an opening through a line under way: the joins before T0, then the follower.
type lineRun struct {
	f     *lineFollower
	c     *client.Client
	joins chan JoinCounts // the joins' answers, once they are done
}

// line is the line of the product an opening creates with -line-rate; nil otherwise.
func (c *Config) line() *api.Line {
	if c.model() != ModelOpening || c.Opening.LineRate <= 0 {
		return nil
	}
	return &api.Line{Rate: c.Opening.LineRate, WindowMS: int(c.Opening.LineWindow.Milliseconds())}
}

// startLine starts the joins of plan on product p (on targets[0]) and returns the run,
// whose follower sends the purchases from T0.
func (s *session) startLine(p api.Product, targets []string, plan openingPlan) *lineRun {
	cfg := s.cfg
	c := cfg.Deploy.apiClient(targets[0], cfg.AdminToken)
	lr := &lineRun{c: c, joins: make(chan JoinCounts, 1)}
	lr.f = newLineFollower(purchaseURLs(targets, p.ID), c, p.ID, cfg.Opening, cfg.FirstUser, cfg.Seed, cfg.Deploy.Tokens,
		plan.epoch, plan.t0At(), cfg.Duration)
	js := lineJoins(cfg.Opening, cfg.FirstUser, cfg.Seed, plan.early)
	go func() {
		lr.joins <- runJoins(context.Background(), c, p.ID, js, plan.epoch, plan.t0.Add(-openingGuard))
	}()
	return lr
}

// lineFairness reads every buyer's drawn place after the run of product id, and checks the
// opening report r against them: the turns of its admissions, PostgreSQL's orders, the
// order of admission and the hammerers' ranks.
func (s *session) lineFairness(ctx context.Context, id int64, plan *openingPlan, adm []admission) *LineFairness {
	o, lr := plan.o, plan.line
	lf := &LineFairness{Rate: o.LineRate, WindowMS: int(o.LineWindow.Milliseconds()), Joins: <-lr.joins,
		ClockSlackMS: ms(lineClockSlack), OrdersChecked: -1}
	lr.f.mu.Lock()
	lf.Lookups, lf.LookupErrors, lf.Left = lr.f.lookups, lr.f.lookupErrs, lr.f.left
	lr.f.mu.Unlock()
	places, mismatch := readPlaces(ctx, lr.c, id, s.cfg.FirstUser, o.Burst, plan.t0, o.LineRate)
	lf.Places, lf.CallMismatch = int64(len(places)), mismatch
	lf.Admitted = int64(len(adm))
	lf.OutOfTurn, lf.AfterWindow, lf.Unranked = checkTurns(adm, places, lineClockSlack)
	lf.Spearman, lf.Kendall, lf.Discordant, lf.MaxPosition = orderCorrelation(adm, places)
	ham, others, n := drawnRanks(places, lf.Joins.joined, s.cfg.FirstUser, int64(o.earlyBuyers()))
	lf.Hammer = hammerTest(ham, others, n)
	if n, bad, err := s.aud.ordersBeforeCall(ctx, id, places); err == nil && n >= 0 {
		lf.OrdersChecked, lf.OrdersOutOfTurn = n, bad
	}
	return lf
}

// admissions are the admitting answers l holds, the first of each buyer.
func (l *openingLog) admissions() []admission {
	seen := map[int64]bool{}
	var adm []admission
	for _, x := range l.recs {
		if x.o.admits() && !seen[x.user] {
			seen[x.user] = true
			adm = append(adm, admission{user: x.user, sent: x.at, at: x.at + x.lat})
		}
	}
	return adm
}

// drawnRanks are the ranks, 1..n, of the places of the buyers who joined before T0 (the
// drawn ones, in the order of their positions: a buyer whose join was not sent goes behind
// them all at T0, and is left out), split into the hammerers' (the eb ids from first) and
// the others'.
func drawnRanks(places map[int64]linePlace, joined map[int64]bool, first, eb int64) (ham, others []int64, n int64) {
	var users []int64
	for u := range places {
		if joined[u] {
			users = append(users, u)
		}
	}
	slices.SortFunc(users, func(a, b int64) int { return cmp.Compare(places[a].pos, places[b].pos) })
	for i, u := range users {
		if u-first < eb {
			ham = append(ham, int64(i+1))
		} else {
			others = append(others, int64(i+1))
		}
	}
	return ham, others, int64(len(users))
}

// readPlaces reads the places of the n buyers from first after the run, keeping those with a
// drawn position; each call is the later of the API's called_at and the one rate gives the
// position (mismatch counts the places whose called_at is earlier).
func readPlaces(ctx context.Context, c *client.Client, id, first int64, n int, t0 time.Time, rate int) (map[int64]linePlace, int64) {
	var mu sync.Mutex
	places := map[int64]linePlace{}
	var mismatch int64
	next := make(chan int64)
	var wg sync.WaitGroup
	for range lineWorkers {
		wg.Go(func() {
			for u := range next {
				lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				pl, err := c.LinePlace(lctx, id, u)
				cancel()
				if err != nil || !pl.Drawn || pl.Position < 1 {
					continue
				}
				p := linePlace{pos: pl.Position, call: callAt(pl.Position, rate)}
				mu.Lock()
				if pl.CalledAt != nil {
					said := pl.CalledAt.Sub(t0)
					if said < p.call-lineClockSlack {
						mismatch++
					}
					p.call = max(p.call, said)
				}
				p.until = p.call + time.Duration(1<<62) // no end unless the API says one
				if pl.CalledUntil != nil {
					p.until = pl.CalledUntil.Sub(t0)
				}
				places[u] = p
				mu.Unlock()
			}
		})
	}
	for u := first; u < first+int64(n) && ctx.Err() == nil; u++ {
		next <- u
	}
	close(next)
	wg.Wait()
	return places, mismatch
}

// ordersBeforeCall counts product id's orders in PostgreSQL whose buyer has a place, and
// those of them created before the buyer's call (less the slack); -1 without the direct audit.
func (a *auditor) ordersBeforeCall(ctx context.Context, id int64, places map[int64]linePlace) (n, bad int64, err error) {
	if a.pg == nil || a.direct == nil {
		return -1, 0, nil
	}
	rows, err := a.pg.QueryContext(ctx, `
		SELECT o.user_id, (EXTRACT(EPOCH FROM o.created_at - p.starts_at) * 1000000)::bigint
		FROM orders o JOIN products p ON p.id = o.product_id WHERE o.product_id = $1`, id)
	if err != nil {
		return -1, 0, fmt.Errorf("orders of product %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var user, us int64
		if err := rows.Scan(&user, &us); err != nil {
			return -1, 0, err
		}
		p, ok := places[user]
		if !ok {
			continue
		}
		n++
		if time.Duration(us)*time.Microsecond < p.call-lineClockSlack {
			bad++
		}
	}
	return n, bad, rows.Err()
}

// print writes f below an opening's report; nothing for nil.
func (f *LineFairness) print(w io.Writer) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "line          rate %d/s, window %d ms; joins before T0: %d sent, %d joined (202) of %d buyers, %d unsent, problems %v; %d places read after the run; %d lookups (%d failed) during it; %d buyers left waiting at sell-out\n",
		f.Rate, f.WindowMS, f.Joins.Sent, f.Joins.Joined, f.Joins.Buyers, f.Joins.Unsent, f.Joins.Problems, f.Places, f.Lookups, f.LookupErrors, f.Left)
	if f.Joins.Unsent > 0 {
		fmt.Fprintf(w, "  WARNING: %d joins were not sent before T0 (the generator fell behind): their buyers joined at the back at T0, and the hammer test leaves them out\n", f.Joins.Unsent)
	}
	orders := "no direct audit"
	if f.OrdersChecked >= 0 {
		orders = fmt.Sprintf("%d of %d orders created before their call", f.OrdersOutOfTurn, f.OrdersChecked)
	}
	fmt.Fprintf(w, "turns         %d admitted: %d out of turn, %d after their window, %d unranked (slack %s); %s; called_at earlier than the rate's %d; admission order vs draw: Spearman %.3f, Kendall %.3f, %d discordant pairs, last position admitted %d\n",
		f.Admitted, f.OutOfTurn, f.AfterWindow, f.Unranked, fmtMS(f.ClockSlackMS), orders, f.CallMismatch, f.Spearman, f.Kendall, f.Discordant, f.MaxPosition)
	h := f.Hammer
	fmt.Fprintf(w, "hammerers     %d of the places drawn at T0: mean rank %.3f (others %.3f, uniform 0.5), SE %.4f, %.2f SE better than uniform (bound %.0f): %s\n",
		h.Hammerers, h.MeanRank, h.OthersMean, h.SE, h.Z, h.Bound, map[bool]string{true: "GAINED", false: "no gain"}[h.Gained])
}
