package loadgen

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
)

// lineWorkers bounds the lookups in flight of an opening through a line, and joinWorkers
// its joins before T0 (more: they are due all at once from the first instant).
const (
	lineWorkers = 16
	joinWorkers = 64
)

// lineJoin is one join before T0: a buyer's POST .../line, due at since the epoch.
type lineJoin struct {
	at   time.Duration
	user int64
}

// lineJoins plans the joins of o before T0, within early of the epoch: each honest buyer
// joins once at an instant drawn by seed in [0, early); each hammerer (the first
// earlyBuyers ids from first) joins EarlyHits times evenly over it, the first at 0, so that
// the hammerers are the first to join. Sorted by due time.
func lineJoins(o Opening, first int64, seed uint64, early time.Duration) []lineJoin {
	rng := rand.New(rand.NewPCG(seed, seed^0x11E))
	eb := o.earlyBuyers()
	js := make([]lineJoin, 0, o.Burst+eb*o.EarlyHits)
	for k := range o.EarlyHits {
		at := time.Duration(int64(k) * int64(early) / int64(o.EarlyHits))
		for b := range eb {
			js = append(js, lineJoin{at: at, user: first + int64(b)})
		}
	}
	for b := eb; b < o.Burst; b++ {
		js = append(js, lineJoin{at: time.Duration(rng.Int64N(int64(early))), user: first + int64(b)})
	}
	sortJoins(js)
	return js
}

func sortJoins(js []lineJoin) {
	// Stable: the hammerers' joins at 0 stay first, in order.
	slices.SortStableFunc(js, func(a, b lineJoin) int { return cmp.Compare(a.at, b.at) })
}

// JoinCounts are the answers to the joins before T0: 202, and the problems by code.
type JoinCounts struct {
	Sent     int64            `json:"sent"`
	Joined   int64            `json:"joined"`             // 202
	Problems map[string]int64 `json:"problems,omitempty"` // by code; "" for no answer
	Unsent   int64            `json:"unsent"`             // due too late to be sent before T0
	// Buyers are the buyers with a join answered 202: their places are drawn at T0.
	Buyers int64 `json:"buyers"`
	joined map[int64]bool
}

// runJoins sends js on c, each at its due time from epoch, until stop (T0 less the guard);
// joins due later are not sent.
func runJoins(ctx context.Context, c *client.Client, product int64, js []lineJoin, epoch, stop time.Time) JoinCounts {
	jc := JoinCounts{Problems: map[string]int64{}, joined: map[int64]bool{}}
	var mu sync.Mutex
	next := make(chan lineJoin)
	var wg sync.WaitGroup
	for range joinWorkers {
		wg.Go(func() {
			for j := range next {
				jctx, cancel := context.WithDeadline(ctx, stop.Add(openingGuard/2))
				_, err := c.JoinLine(jctx, product, j.user)
				cancel()
				mu.Lock()
				jc.Sent++
				var p *api.Problem
				switch {
				case err == nil:
					jc.Joined++
					jc.joined[j.user] = true
				case errors.As(err, &p):
					jc.Problems[p.Code]++
				default:
					jc.Problems[""]++
				}
				mu.Unlock()
			}
		})
	}
	for i, j := range js {
		due := epoch.Add(j.at)
		if due.After(stop) || time.Now().After(stop) || ctx.Err() != nil {
			mu.Lock()
			jc.Unsent += int64(len(js) - i)
			mu.Unlock()
			break
		}
		time.Sleep(time.Until(due))
		next <- j
	}
	close(next)
	wg.Wait()
	jc.Buyers = int64(len(jc.joined))
	return jc
}

// lineFollower runs the purchases of an opening through a line from T0, as well-behaved
// clients do: each buyer purchases once in the burst, and on not_your_turn looks its place
// up and purchases again at its called_at (busy, rate_limited, unavailable: after
// Retry-After), at most tries times each; once a purchase is answered sold_out, the buyers
// still waiting leave. It is the attack's pacer (Pace blocks until a purchase is due) and
// its targeter (Target hands out the purchase Pace released). Safe for concurrent use.
type lineFollower struct {
	urls    []string
	tokens  *Tokens
	c       *client.Client // the lookups'
	product int64
	epoch   time.Time
	end     time.Duration // since the epoch: nothing is released after it
	tries   int

	mu          sync.Mutex
	due         dueHeap
	ready       chan int64
	outstanding int // released purchases not yet answered, and lookups under way
	sent        map[int64]int
	soldOut     bool
	left        int64 // buyers who left waiting when the product sold out
	lookups     int64
	lookupErrs  int64
	wake        chan struct{}
	sem         chan struct{}
}

// newLineFollower plans the burst of o from t0At since epoch: every buyer's first purchase,
// in an order shuffled by seed, due evenly over the window as openingTargeter sends them.
func newLineFollower(urls []string, c *client.Client, product int64, o Opening, first int64, seed uint64, tokens *Tokens, epoch time.Time, t0At, within time.Duration) *lineFollower {
	f := &lineFollower{urls: urls, tokens: tokens, c: c, product: product, epoch: epoch, end: t0At + within,
		tries: o.LineTries, ready: make(chan int64, o.Burst*o.LineTries), sent: map[int64]int{},
		wake: make(chan struct{}, 1), sem: make(chan struct{}, lineWorkers)}
	order := rand.New(rand.NewPCG(seed, seed^0x0BE111)).Perm(o.Burst)
	step := float64(o.Window) / float64(o.Burst)
	for j, b := range order {
		f.due = append(f.due, dueItem{at: t0At + time.Duration((float64(j)+0.5)*step), user: first + int64(b)})
	}
	heap.Init(&f.due)
	return f
}

// Pace releases the next purchase once it is due, blocking until then; it stops when no
// buyer has anything left to send, or at the end.
func (f *lineFollower) Pace(_ time.Duration, _ uint64) (time.Duration, bool) {
	for {
		now := time.Since(f.epoch)
		f.mu.Lock()
		if now >= f.end || len(f.due) == 0 && f.outstanding == 0 {
			f.mu.Unlock()
			return 0, true
		}
		wait := 50 * time.Millisecond
		if len(f.due) > 0 {
			if d := f.due[0]; d.at <= now {
				heap.Pop(&f.due)
				f.outstanding++
				f.sent[d.user]++
				f.ready <- d.user // never blocks: at most tries per buyer
				f.mu.Unlock()
				return 0, false
			}
			wait = min(wait, f.due[0].at-now)
		}
		f.mu.Unlock()
		t := time.NewTimer(min(wait, f.end-now))
		select {
		case <-t.C:
		case <-f.wake:
			t.Stop()
		}
	}
}

// Rate is vegeta's hit rate at elapsed; a line's purchases follow the buyers' turns, not a rate.
func (f *lineFollower) Rate(time.Duration) float64 { return 0 }

// Target writes the purchase Pace released; vegeta.ErrNoTargets if there is none.
func (f *lineFollower) Target(t *vegeta.Target) error {
	if t == nil {
		return vegeta.ErrNilTarget
	}
	var id int64
	select {
	case id = <-f.ready:
	default:
		return vegeta.ErrNoTargets
	}
	t.Method = http.MethodPost
	t.URL = f.urls[int(id)%len(f.urls)]
	t.Body = append(strconv.AppendInt([]byte(`{"user_id":`), id, 10), '}')
	t.Header = http.Header{"Content-Type": []string{"application/json"}}
	if f.tokens != nil {
		jwt, err := f.tokens.Token(context.Background(), id)
		if err != nil {
			return err
		}
		t.Header.Set("Authorization", "Bearer "+jwt)
	}
	return nil
}

// answered takes the answer o to a purchase of user, its Retry-After header retry, and
// decides the buyer's next step. It does not block.
func (f *lineFollower) answered(user int64, o Outcome, retry string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.poke()
	f.outstanding--
	if o == SoldOut && !f.soldOut {
		f.soldOut = true
		f.left += int64(len(f.due))
		f.due = f.due[:0]
	}
	if f.soldOut || f.sent[user] >= f.tries {
		return
	}
	now := time.Since(f.epoch)
	switch o {
	case NotYourTurn:
		f.outstanding++
		go f.lookup(user, now+retryAfter(retry))
	case Busy, RateLimited, Unavailable:
		heap.Push(&f.due, dueItem{at: now + retryAfter(retry), user: user})
	}
}

// lookup reads user's place and queues its next purchase at its called_at (at once when
// called; never when expired), or at fallback when the lookup fails.
func (f *lineFollower) lookup(user int64, fallback time.Duration) {
	f.sem <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	pl, err := f.c.LinePlace(ctx, f.product, user)
	cancel()
	<-f.sem
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.poke()
	f.outstanding--
	f.lookups++
	at := fallback
	switch {
	case err != nil:
		f.lookupErrs++
	case pl.State == api.PlaceCalled:
		at = time.Since(f.epoch)
	case pl.State == api.PlaceWaiting && pl.CalledAt != nil:
		at = pl.CalledAt.Sub(f.epoch)
	default: // expired, not in line: nothing to buy
		return
	}
	if f.soldOut {
		f.left++
		return
	}
	heap.Push(&f.due, dueItem{at: at, user: user})
}

func (f *lineFollower) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// retryAfter reads a Retry-After of whole seconds; 1 s when absent or unreadable.
func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(h); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// dueItem is a buyer's next purchase, due at since the epoch.
type dueItem struct {
	at   time.Duration
	user int64
}

type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
