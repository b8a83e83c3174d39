package loadgen

import (
	"encoding/json"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	problem := func(code string) []byte {
		b, _ := json.Marshal(api.NewProblem(code, "d"))
		return b
	}
	tests := []struct {
		name string
		res  vegeta.Result
		want Outcome
	}{
		{"created", vegeta.Result{Code: 201, Body: []byte(`{"order_id":1}`)}, Bought},
		{"accepted", vegeta.Result{Code: 202, Body: []byte(`{"status":"accepted","product_id":1,"user_id":2}`)}, Accepted},
		{"sold out", vegeta.Result{Code: 409, Body: problem("sold_out"), Error: "409 Conflict"}, SoldOut},
		{"already purchased", vegeta.Result{Code: 409, Body: problem("already_purchased")}, AlreadyPurchased},
		{"sale not started", vegeta.Result{Code: 409, Body: problem("sale_not_started")}, SaleNotStarted},
		{"sale ended", vegeta.Result{Code: 410, Body: problem("sale_ended")}, SaleEnded},
		{"sale_ended with 409", vegeta.Result{Code: 409, Body: problem("sale_ended")}, Other4xx},
		{"not your turn", vegeta.Result{Code: 409, Body: problem("not_your_turn")}, NotYourTurn},
		{"place expired", vegeta.Result{Code: 410, Body: problem("place_expired")}, PlaceExpired},
		{"place_expired with 409", vegeta.Result{Code: 409, Body: problem("place_expired")}, Other4xx},
		{"unknown 409 code", vegeta.Result{Code: 409, Body: problem("conflict")}, Other4xx},
		{"409 without body", vegeta.Result{Code: 409}, Other4xx},
		{"409 with garbage", vegeta.Result{Code: 409, Body: []byte(`{"code":`)}, Other4xx},
		{"busy", vegeta.Result{Code: 503, Body: problem("busy")}, Busy},
		{"unavailable", vegeta.Result{Code: 503, Body: problem("unavailable")}, Unavailable},
		{"outcome unknown", vegeta.Result{Code: 503, Body: problem("outcome_unknown")}, OutcomeUnknown},
		{"503 without a problem", vegeta.Result{Code: 503, Body: []byte("upstream down")}, ServerError},
		{"a code with another status", vegeta.Result{Code: 500, Body: problem("busy")}, ServerError},
		{"rate limited", vegeta.Result{Code: 429, Body: problem("rate_limited")}, RateLimited},
		{"rate limited, any body", vegeta.Result{Code: 429}, RateLimited},
		{"not found", vegeta.Result{Code: 404, Body: problem("product_not_found")}, Other4xx},
		{"bad request", vegeta.Result{Code: 400, Body: problem("invalid_request")}, Other4xx},
		{"too large", vegeta.Result{Code: 413}, Other4xx},
		{"internal", vegeta.Result{Code: 500, Body: problem("internal")}, ServerError},
		{"ok is not created", vegeta.Result{Code: 200}, Unexpected},
		{"redirect", vegeta.Result{Code: 302}, Unexpected},
		{"refused", vegeta.Result{Error: "dial tcp 127.0.0.1:1: connect: connection refused"}, TransportError},
		{"timeout", vegeta.Result{Error: "context deadline exceeded (Client.Timeout exceeded)"}, TransportError},
		{"no targets", vegeta.Result{Error: vegeta.ErrNoTargets.Error()}, noTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(&tt.res); got != tt.want {
				t.Errorf("classify = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestOutcomeIsError(t *testing.T) {
	t.Parallel()
	errs := map[Outcome]bool{Unavailable: true, OutcomeUnknown: true, Other4xx: true, ServerError: true, TransportError: true, Unexpected: true}
	unclear := map[Outcome]bool{OutcomeUnknown: true, ServerError: true, TransportError: true, Unexpected: true}
	for o := range NumOutcomes {
		if got := o.isError(); got != errs[o] {
			t.Errorf("%s.isError() = %v, want %v", o, got, errs[o])
		}
		if got := o.isUnclear(); got != unclear[o] {
			t.Errorf("%s.isUnclear() = %v, want %v", o, got, unclear[o])
		}
	}
}

func TestCountsJSON(t *testing.T) {
	t.Parallel()
	var c Counts
	c[Bought], c[Accepted], c[SoldOut], c[OutcomeUnknown], c[TransportError] = 3, 4, 40, 2, 1
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bought":3,"accepted":4,"sold_out":40,"already_purchased":0,"busy":0,"unavailable":0,"outcome_unknown":2,"rate_limited":0,"sale_not_started":0,"sale_ended":0,"not_your_turn":0,"place_expired":0,` +
		`"other_4xx":0,"5xx":0,"transport_error":1,"unexpected":0}`
	if got := string(b); got != want {
		t.Fatalf("json = %s\nwant   %s", got, want)
	}
	var back Counts
	if err := json.Unmarshal(b, &back); err != nil || back != c {
		t.Fatalf("round trip = %v, %v; want %v", back, err, c)
	}
	if got, want := c.Total(), int64(50); got != want {
		t.Errorf("total = %d, want %d", got, want)
	}
	if got, want := c.Admitted(), int64(7); got != want {
		t.Errorf("admitted = %d, want %d", got, want)
	}
	if got, want := c.Errors(), int64(3); got != want {
		t.Errorf("errors = %d, want %d", got, want)
	}
	if got, want := c.Unclear(), int64(3); got != want {
		t.Errorf("unclear = %d, want %d", got, want)
	}
}
