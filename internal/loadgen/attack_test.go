package loadgen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// fakeProductURLs creates a product on the fake API and returns its purchase URLs.
func fakeProductURLs(t *testing.T, base, strategy string, stock int) []string {
	t.Helper()
	p, err := client.New(base, &client.Options{AdminToken: "secret"}).CreateProduct(context.Background(),
		api.NewProduct{Name: "t", Stock: new(stock), Strategy: strategy})
	if err != nil {
		t.Fatal(err)
	}
	return purchaseURLs([]string{base}, p.ID)
}

func testSpec(tr vegeta.Targeter) attackSpec {
	return attackSpec{name: "test", targeter: tr, workers: 8, duration: 10 * time.Second, requests: 200, timeout: 5 * time.Second}
}

func TestAttackBoundedByRequests(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	urls := fakeProductURLs(t, base, "dlock", 10)
	var results bytes.Buffer
	live := &liveCounts{}
	res, err := attack(context.Background(), testSpec(newTargeter(urls, newBuyers(1, 0, 1), nil)), live, nil, vegeta.NewEncoder(&results))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.metrics.Requests, uint64(200); got != want {
		t.Fatalf("requests = %d, want %d", got, want)
	}
	if got, want := res.counts[Bought], int64(10); got != want {
		t.Errorf("bought = %d, want %d", got, want)
	}
	if got, want := res.counts[SoldOut], int64(190); got != want {
		t.Errorf("sold_out = %d, want %d", got, want)
	}
	if res.excluded != 0 {
		t.Errorf("excluded = %d, want 0: the pacer bounds the attack, the targeter never runs dry", res.excluded)
	}
	if live.snapshot() != res.counts {
		t.Errorf("live counts %v differ from the final %v", live.snapshot(), res.counts)
	}
	// The results file is what `vegeta report` reads.
	dec := vegeta.NewDecoder(&results)
	var n int
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode result %d: %v", n, err)
		}
		n++
	}
	if n != 200 {
		t.Errorf("results file holds %d results, want 200", n)
	}
}

func TestAttackStopsAfterSoldOut(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	urls := fakeProductURLs(t, base, "dlock", 5)
	spec := testSpec(newTargeter(urls, newBuyers(1, 0, 1), nil))
	spec.requests, spec.duration, spec.afterSold = 1_000_000, 20*time.Second, 100*time.Millisecond
	began := time.Now()
	res, err := attack(context.Background(), spec, &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("attack took %s, want it to stop about 100ms after the first sold_out", took)
	}
	if res.counts[Bought] != 5 || res.counts[SoldOut] == 0 {
		t.Fatalf("counts = %v, want 5 bought and some sold_out", res.counts)
	}
}

func TestAttackStopsOnCancel(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	urls := fakeProductURLs(t, base, "dlock", 5)
	spec := testSpec(newTargeter(urls, newBuyers(1, 0, 1), nil))
	spec.requests, spec.duration, spec.rate = 1_000_000, 20*time.Second, 50
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := attack(ctx, spec, &liveCounts{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("attack took %s after its context ended", took)
	}
}

// A Targeter that runs dry makes vegeta emit "no targets to attack" results; they are not
// requests and must not be counted.
func TestAttackExcludesNoTargets(t *testing.T) {
	t.Parallel()
	_, base := fakeapi.New(t)
	urls := fakeProductURLs(t, base, "dlock", 5)
	inner := newTargeter(urls, newBuyers(1, 0, 1), nil)
	var n atomic.Int64
	dry := func(tgt *vegeta.Target) error {
		if n.Add(1) > 50 {
			return vegeta.ErrNoTargets
		}
		return inner(tgt)
	}
	spec := testSpec(dry)
	spec.requests = 0
	res, err := attack(context.Background(), spec, &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.counts.Total(), int64(50); got != want {
		t.Errorf("counted %d requests, want %d", got, want)
	}
	if got := res.metrics.Requests; got != 50 {
		t.Errorf("metrics counted %d requests, want 50", got)
	}
	if res.excluded == 0 {
		t.Error("no result excluded: the test did not exercise the no-targets path")
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	res := &attackResult{name: "x", began: time.Now(), tally: newTally(), model: ModelClosed}
	add := func(at, lat time.Duration, o Outcome) {
		res.tally.add(at, lat, lat, o)
		res.counts[o]++
		res.metrics.Add(&vegeta.Result{Timestamp: res.began.Add(at), Latency: lat, Code: 201})
	}
	// 4 sales in the first 100 ms, then 100 rejections over 900 ms.
	for i := range 4 {
		add(time.Duration(i)*20*ms, 40*ms, Bought) // last sale ends at 60+40 = 100 ms
	}
	for i := range 100 {
		add(100*ms+time.Duration(i)*9*ms, ms, SoldOut) // last answer at 100+891+1 = 992 ms
	}
	res.metrics.Close()
	st := summarize(res)
	if got, want := st.SellSeconds, 0.1; !near(got, want) {
		t.Errorf("sell seconds = %v, want %v", got, want)
	}
	if got, want := st.OrdersPerSec, 40.0; !near(got, want) {
		t.Errorf("orders/s = %v, want %v", got, want)
	}
	if got, want := st.Rejections, int64(100); got != want {
		t.Errorf("rejections = %d, want %d", got, want)
	}
	if got, want := st.RejectionsPerSec, 100/0.892; !near(got, want) {
		t.Errorf("rejections/s = %v, want %v", got, want)
	}
	if got, want := st.ByOutcome["bought"].P50, 40.0; got < want || got > want*1.001 { // HDR: 3 digits
		t.Errorf("bought p50 = %v ms, want %v", got, want)
	}
	if got, want := st.Seconds, 0.992; !near(got, want) {
		t.Errorf("seconds = %v, want %v", got, want)
	}
}

func near(a, b float64) bool { return a > b*0.999 && a < b*1.001 }

// TestAttackKeepsTransportErrors: requests that get no HTTP answer (here, to a loopback port
// where nothing listens) are counted as transport_error, and the report keeps what went wrong,
// each error once.
func TestAttackKeepsTransportErrors(t *testing.T) {
	t.Parallel()
	urls := purchaseURLs([]string{"http://" + servers.FreeAddr(t)}, 1)
	spec := testSpec(newTargeter(urls, newBuyers(1, 0, 1), nil))
	spec.requests = 20
	res, err := attack(context.Background(), spec, &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := summarize(res)
	if st.Outcomes[TransportError] != 20 || len(st.TransportErrors) != 1 || !strings.Contains(st.TransportErrors[0], "connection refused") {
		t.Fatalf("%d transport errors, kept %q; want 20, one \"connection refused\"", st.Outcomes[TransportError], st.TransportErrors)
	}
}
