package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// purchaseLog records what each buyer of one attack was answered, for the verdict's check
// per buyer (buyers.go), and with keep the history of its purchases for -check: each
// request's buyer, read off the request as it leaves (vegeta's results carry the request's
// sequence number, not its body), and each result's times and answer. It is safe for
// concurrent use.
type purchaseLog struct {
	product int64
	keep    bool // -check: keep every purchase in ops
	mu      sync.Mutex
	users   map[uint64]int64 // vegeta's sequence number -> the request's user_id
	buyers  map[int64]*buyerAnswers
	ops     []history.Purchase
	opening *openingLog   // an opening's answers (-model opening); nil otherwise
	line    *lineFollower // told each answer of an opening through a line; nil otherwise
}

func newPurchaseLog(product int64, keep bool) *purchaseLog {
	return &purchaseLog{product: product, keep: keep, users: map[uint64]int64{}, buyers: map[int64]*buyerAnswers{}}
}

// recordingTransport notes the buyer of each request in log before sending it on.
type recordingTransport struct {
	log  *purchaseLog
	next http.RoundTripper
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	seq, err := strconv.ParseUint(req.Header.Get("X-Vegeta-Seq"), 10, 64)
	if err == nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(body)
			if u := requestUser(b); u > 0 {
				t.log.mu.Lock()
				t.log.users[seq] = u
				t.log.mu.Unlock()
			}
		}
	}
	return t.next.RoundTrip(req)
}

// requestUser reads the user_id of a purchase body as newTargeter writes it; 0 otherwise.
func requestUser(body []byte) int64 {
	digits, ok := bytes.CutPrefix(body, []byte(`{"user_id":`))
	if !ok {
		return 0
	}
	u, _ := strconv.ParseInt(string(bytes.TrimSuffix(digits, []byte("}"))), 10, 64)
	return u
}

// add records the answer of result r, whose outcome is o, to its buyer, and with keep the
// purchase. A request whose buyer was never noted never left: it is not recorded.
func (l *purchaseLog) add(r *vegeta.Result, o Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	user, ok := l.users[r.Seq]
	if !ok {
		return
	}
	delete(l.users, r.Seq)
	var order int64
	if o == Bought || o == AlreadyPurchased { // the answers that name an order
		order = answerOrder(r.Body)
	}
	b := l.buyers[user]
	if b == nil {
		b = &buyerAnswers{}
		l.buyers[user] = b
	}
	b.note(o, order)
	if l.opening != nil {
		l.opening.add(user, r.Seq, r.Timestamp, r.Latency, o)
	}
	if l.line != nil {
		l.line.answered(user, o, r.Headers.Get("Retry-After"))
	}
	if !l.keep {
		return
	}
	status, code := int(r.Code), problemCodes[o]
	if o == RateLimited {
		code = api.CodeRateLimited
	}
	p := history.Purchase{Product: l.product, User: user, Invoke: r.Timestamp, Status: status, Code: code,
		Outcome: history.PurchaseOutcome(status, code), Order: order}
	if status != 0 {
		p.Complete = r.End()
	}
	l.ops = append(l.ops, p)
}

// problemCodes are the problem codes of the outcomes read from one (see problemOutcomes).
var problemCodes = func() map[Outcome]string {
	m := map[Outcome]string{}
	for code, o := range problemOutcomes {
		m[o] = code
	}
	return m
}()

// historyReport is what -check found in the history of one run's purchases.
type historyReport struct {
	Verdict      history.Verdict `json:"verdict"` // linearizable, illegal or timeout
	Linearizable bool            `json:"linearizable"`
	Purchases    int             `json:"purchases"`  // the run's purchases, each request one
	Operations   int             `json:"operations"` // those porcupine's search ordered
	Settled      int             `json:"settled"`    // answers legal in every order, decided without it
	Dropped      int             `json:"dropped"`    // refusals, and unknowns that did nothing
	CheckSeconds float64         `json:"check_seconds"`
	// Resolved says whether PostgreSQL's orders (-database-url) resolved the purchases with
	// no clear answer; without them, each may have taken a unit or not.
	Resolved      bool     `json:"resolved_by_postgresql"`
	Reasons       []string `json:"reasons,omitempty"`
	Visualization string   `json:"visualization,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// checkHistory checks the history of l, a product of stock, with PostgreSQL's orders when
// the auditor reads PostgreSQL, and writes porcupine's page of a failed check to dir.
func (s *session) checkHistory(ctx context.Context, l *purchaseLog, stock int64, dir string) *historyReport {
	sale := history.Sale{Stock: map[int64]int{l.product: int(stock)}}
	h := &historyReport{Purchases: len(l.ops)}
	if s.aud.direct != nil {
		orders, err := s.aud.direct.Orders(ctx, l.product)
		if err != nil {
			h.Error = err.Error()
			return h
		}
		sale.Orders, h.Resolved = map[int64]map[int64]int64{l.product: orders}, true
	}
	res, err := history.CheckPurchases(l.ops, sale, s.cfg.CheckTimeout, dir)
	h.Verdict, h.Linearizable, h.Operations, h.Settled, h.Dropped = res.Verdict, res.OK(), res.Ops, res.Settled, res.Dropped
	h.CheckSeconds, h.Reasons, h.Visualization = res.Duration.Seconds(), res.Reasons, res.Visualization
	if err != nil {
		h.Error = err.Error()
	}
	return h
}

// String is the report in one line, e.g. "linearizable: 1234 purchases (ordered 104, settled
// 1125, dropped 5) checked in 12ms, unknown outcomes resolved by PostgreSQL".
func (h *historyReport) String() string {
	if h.Error != "" && h.Verdict == "" {
		return "not checked: " + h.Error
	}
	took := time.Duration(h.CheckSeconds * float64(time.Second))
	if took >= 10*time.Millisecond {
		took = took.Round(time.Millisecond)
	} else {
		took = took.Round(10 * time.Microsecond)
	}
	s := fmt.Sprintf("%s: %d purchases (ordered %d, settled %d, dropped %d) checked in %v",
		h.Verdict, h.Purchases, h.Operations, h.Settled, h.Dropped, took)
	if h.Resolved {
		s += ", unknown outcomes resolved by PostgreSQL"
	}
	return s
}

// print writes the report's lines, indented, after a line that begins with label.
func (h *historyReport) print(w io.Writer, label string) {
	fmt.Fprintf(w, "%s%s\n", label, h)
	for _, r := range h.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	if h.Error != "" && h.Verdict != "" {
		fmt.Fprintf(w, "  - error: %s\n", h.Error)
	}
	if h.Visualization != "" {
		fmt.Fprintf(w, "  porcupine's page of the history: %s\n", h.Visualization)
	}
}

// printHistories writes the history report of each run of rounds that has one.
func printHistories(w io.Writer, rounds [][]RunReport) {
	for i, round := range rounds {
		for _, r := range round {
			if h := r.History; h != nil {
				label := "history " + r.Name + ": "
				if len(rounds) > 1 {
					label = fmt.Sprintf("history %s, run %d: ", r.Name, i+1)
				}
				h.print(w, label)
			}
		}
	}
}

// judgeHistory adds h's failure to v: a safe strategy's history must be linearizable. naive's
// is expected not to be, as its oversell is.
func judgeHistory(v *verdict, strategy string, h *historyReport) {
	if h == nil || !IsSafe(strategy) || h.Linearizable {
		return
	}
	v.Problems = append(v.Problems, "history "+h.String())
	v.OK, v.Label = false, "FAIL"
}
