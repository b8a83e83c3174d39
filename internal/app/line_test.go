package app_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestLineOverHTTP walks docs/api.md#the-line-before-the-start over HTTP, for every
// production strategy, on two API
// processes sharing PostgreSQL and Redis, buyers alternating between them: six buyers join
// before the start (202, no position yet, joining again keeps the place), the start draws
// their positions (a permutation of 1..6), two are called at once and the others one every
// 500 ms; a purchase before its call is 409 not_your_turn with Retry-After and the position;
// the buyer drawn third never comes back, so its place expires (410 place_expired) and the
// places behind it are called all the same; a buyer who bought and retries after its call
// ended is answered already_purchased; a buyer who never joined gets a place at the back.
func TestLineOverHTTP(t *testing.T) {
	s := newStack(t, order.Config{})
	s2 := newStackOn(t, s.DB, s.Redis, s.Prefix, order.Config{})
	for _, strategy := range inventory.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			t.Parallel()
			lineOverHTTP(t, []*stack{s, s2}, strategy)
		})
	}
}

// lineOverHTTP is TestLineOverHTTP for one strategy.
func lineOverHTTP(t *testing.T, replicas []*stack, strategy inventory.Strategy) {
	s, s2 := replicas[0], replicas[1]
	ctx := context.Background()
	stock := 5
	start := time.Now().Add(1500 * time.Millisecond).Truncate(time.Millisecond)
	p, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "line", Stock: &stock, Strategy: string(strategy), StartsAt: &start,
		Line: &api.Line{Rate: 2, WindowMS: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Line == nil || p.Line.Rate != 2 || p.Line.WindowMS != 1000 {
		t.Fatalf("created line = %+v, want rate 2, window 1000", p.Line)
	}
	const buyers = 6
	for u := int64(1); u <= buyers; u++ {
		for range 2 { // joining again keeps the place
			pl, err := replicas[u%2].API.JoinLine(ctx, p.ID, u)
			if err != nil || pl.State != api.PlaceWaiting || pl.Drawn || pl.Position != 0 || pl.WaitMS <= 0 {
				t.Fatalf("user %d joins before the start: %+v, %v; want waiting, not drawn, a wait", u, pl, err)
			}
		}
	}
	if _, err := s.API.Purchase(ctx, p.ID, 1); !isCode(err, api.CodeSaleNotStarted) {
		t.Fatalf("purchase before the start = %v, want sale_not_started", err)
	}
	if pl, err := s2.API.LinePlace(ctx, p.ID, 99); err != nil || pl.State != api.PlaceNotInLine {
		t.Fatalf("place of a buyer who never joined = %+v, %v; want not_in_line", pl, err)
	}

	time.Sleep(time.Until(start.Add(50 * time.Millisecond)))
	byPos := make([]int64, buyers+1) // position -> user
	for u := int64(1); u <= buyers; u++ {
		pl, err := replicas[u%2].API.LinePlace(ctx, p.ID, u)
		if err != nil || !pl.Drawn || pl.Position < 1 || pl.Position > buyers || byPos[pl.Position] != 0 {
			t.Fatalf("user %d after the start: %+v, %v; want a position of its own in 1..%d", u, pl, err, buyers)
		}
		byPos[pl.Position] = u
	}
	noShow := byPos[3]
	bought := map[int64]bool{}
	deadline := start.Add(5 * time.Second)
	for len(bought) < buyers-1 && time.Now().Before(deadline) {
		for pos := 1; pos <= buyers; pos++ {
			u := byPos[pos]
			if u == noShow || bought[u] {
				continue
			}
			r := replicas[pos%2]
			_, err := r.API.Purchase(ctx, p.ID, u)
			var prob *api.Problem
			var queued *client.AcceptedError
			switch {
			case err == nil, errors.As(err, &queued):
				bought[u] = true
				// Called: not before its time (position p called at start + (p - 2) * 500 ms).
				if due := start.Add(time.Duration(max(0, pos-2)) * 500 * time.Millisecond); time.Now().Before(due) {
					t.Errorf("position %d bought at %s, before its call at %s", pos, time.Since(start), due.Sub(start))
				}
			case errors.As(err, &prob) && prob.Code == api.CodeNotYourTurn:
				if secs, _ := strconv.Atoi(prob.RetryAfter); secs < 1 || prob.Position != int64(pos) {
					t.Errorf("not_your_turn: Retry-After %q, position %d; want at least 1, %d", prob.RetryAfter, prob.Position, pos)
				}
			default:
				t.Fatalf("position %d: purchase = %v", pos, err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(bought) != buyers-1 {
		t.Fatalf("bought %d, want %d: the no-show held the line", len(bought), buyers-1)
	}
	time.Sleep(time.Until(start.Add(time.Second + 1000*time.Millisecond + 100*time.Millisecond))) // position 3's call ended
	if _, err := s.API.Purchase(ctx, p.ID, noShow); !isCode(err, api.CodePlaceExpired) {
		t.Errorf("no-show's purchase after its call = %v, want place_expired", err)
	}
	if pl, err := s2.API.LinePlace(ctx, p.ID, noShow); err != nil || pl.State != api.PlaceExpired {
		t.Errorf("no-show's place = %+v, %v; want expired", pl, err)
	}
	if _, err := s2.API.Purchase(ctx, p.ID, byPos[1]); !isCode(err, api.CodeAlreadyPurchased) {
		t.Errorf("retry of position 1 after its call = %v, want already_purchased", err)
	}
	_, err = s.API.Purchase(ctx, p.ID, 99) // never joined: a place at the back
	var prob *api.Problem
	if !errors.As(err, &prob) || (prob.Code != api.CodeNotYourTurn && prob.Code != api.CodeSoldOut) {
		t.Errorf("purchase of a buyer not in line = %v, want not_your_turn", err)
	} else if prob.Code == api.CodeNotYourTurn && prob.Position != buyers+1 {
		t.Errorf("buyer not in line: position %d, want %d", prob.Position, buyers+1)
	}
	testenv.Eventually(t, 5*time.Second, "the audit", func() bool { // queue: written by the consumers
		a := s.audit(t, p.ID)
		return a.Orders == buyers-1 && a.Consistent
	})
}

// TestLineRefusals: a line without a start is 400; a product without a line answers no_line
// to a join and a lookup; a join after the end is sale_ended.
func TestLineRefusals(t *testing.T) {
	s := newStack(t, order.Config{})
	ctx := context.Background()
	stock := 1
	_, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "l", Stock: &stock, Line: &api.Line{}})
	if !isCode(err, api.CodeInvalidRequest) {
		t.Errorf("line without starts_at = %v, want invalid_request", err)
	}
	plain := s.createProduct(t, 1, "dlock", 0)
	if _, err := s.API.JoinLine(ctx, plain.ID, 1); !isCode(err, api.CodeNoLine) {
		t.Errorf("join of a product without a line = %v, want no_line", err)
	}
	if _, err := s.API.LinePlace(ctx, plain.ID, 1); !isCode(err, api.CodeNoLine) {
		t.Errorf("place in a product without a line = %v, want no_line", err)
	}
	from, to := time.Now().Add(-time.Hour), time.Now().Add(-time.Minute)
	ended, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "l", Stock: &stock, StartsAt: &from, EndsAt: &to, Line: &api.Line{}})
	if err != nil || ended.Line == nil || ended.Line.Rate != 1000 || ended.Line.WindowMS != 30_000 {
		t.Fatalf("line with defaults = %+v, %v; want dlock's rate 1000, window 30000", ended.Line, err)
	}
	if _, err := s.API.JoinLine(ctx, ended.ID, 1); !isCode(err, api.CodeSaleEnded) {
		t.Errorf("join after the end = %v, want sale_ended", err)
	}
}

// TestLineSoldOutNoWait: once the product is marked sold out, a buyer whose place is not
// called is answered sold_out, not made to wait for its turn to learn it.
func TestLineSoldOutNoWait(t *testing.T) {
	s := newStack(t, order.Config{})
	ctx := context.Background()
	start := time.Now().Add(300 * time.Millisecond).Truncate(time.Millisecond)
	p, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "line", Stock: new(1), Strategy: "redis", StartsAt: &start,
		Line: &api.Line{Rate: 1, WindowMS: 5000}}) // one place called at the start, then one a second
	if err != nil {
		t.Fatal(err)
	}
	byPos := map[int64]int64{}
	for u := int64(1); u <= 3; u++ {
		if _, err := s.API.JoinLine(ctx, p.ID, u); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(start.Add(20 * time.Millisecond)))
	for u := int64(1); u <= 3; u++ {
		pl, err := s.API.LinePlace(ctx, p.ID, u)
		if err != nil {
			t.Fatal(err)
		}
		byPos[pl.Position] = u
	}
	if _, err := s.API.Purchase(ctx, p.ID, byPos[1]); err != nil {
		t.Fatalf("first place's purchase = %v", err)
	}
	testenv.Eventually(t, time.Second, "the third place told sold_out", func() bool {
		_, err := s.API.Purchase(ctx, p.ID, byPos[3])
		return isCode(err, api.CodeSoldOut)
	})
	if called := start.Add(2 * time.Second); !time.Now().Before(called) {
		t.Fatalf("told sold_out only at %s after the start, after its call", time.Since(start))
	}
}

// TestLineCrowdInTurn: 40 buyers join before the start, then all of them try to buy every
// 100 ms for 5 s, concurrently, through two API processes; the line calls 10 at the start and
// 10 a second. Every order must be written no earlier than its buyer's call time (the order's
// created_at, PostgreSQL's clock on this host, is after its admission, so an order written
// before the call proves an admission out of turn), and every buyer buys once.
func TestLineCrowdInTurn(t *testing.T) {
	s := newStack(t, order.Config{})
	s2 := newStackOn(t, s.DB, s.Redis, s.Prefix, order.Config{})
	ctx := context.Background()
	const buyers, rate = 40, 10
	start := time.Now().Add(time.Second).Truncate(time.Millisecond)
	p, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "crowd", Stock: new(buyers), Strategy: "redis", StartsAt: &start,
		Line: &api.Line{Rate: rate, WindowMS: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	for u := int64(1); u <= buyers; u++ {
		if _, err := s.API.JoinLine(ctx, p.ID, u); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(start))
	var wg sync.WaitGroup
	for u := int64(1); u <= buyers; u++ {
		wg.Go(func() {
			r := []*stack{s, s2}[u%2]
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				_, err := r.API.Purchase(ctx, p.ID, u)
				if err == nil {
					return
				}
				if !isCode(err, api.CodeNotYourTurn) {
					t.Errorf("user %d: %v", u, err)
					return
				}
			}
			t.Errorf("user %d never bought", u)
		})
	}
	wg.Wait()
	var rows []struct {
		UserID    int64
		CreatedAt time.Time
	}
	if err := s.DB.Raw(`SELECT user_id, created_at FROM orders WHERE product_id = ?`, p.ID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != buyers {
		t.Fatalf("%d orders, want %d", len(rows), buyers)
	}
	for _, o := range rows {
		pl, err := s2.API.LinePlace(ctx, p.ID, o.UserID)
		if err != nil {
			t.Fatal(err)
		}
		due := start.Add(time.Duration(max(0, pl.Position-rate)) * time.Second / rate)
		if o.CreatedAt.Before(due) {
			t.Errorf("user %d at position %d: order written %s after the start, before its call at %s",
				o.UserID, pl.Position, o.CreatedAt.Sub(start), due.Sub(start))
		}
	}
}
