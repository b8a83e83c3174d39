package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/order"
)

// TestContract: the API speaks its contract, package api. Every route's success body
// decodes into its contract type with unknown fields refused and encodes back to the same
// JSON (the type holds every field the server sends, and none it does not), and has the
// keys it always had; every problem body decodes into api.Problem the same way; every bad request of TestBadInput, and every refusal
// of a sale, comes back from client.CheckResponse as an *api.Problem with its code.
func TestContract(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	gated := s.createProduct(t, 2, "redis", 0) // its audit has the gate's part
	plain := s.createProduct(t, 5, "dlock", 0)
	empty := s.createProduct(t, 0, "optimistic", 0)
	later := time.Now().Add(time.Hour)
	lined, err := s.API.CreateProduct(context.Background(), api.NewProduct{Name: "line", Stock: new(1), StartsAt: &later, Line: &api.Line{}})
	if err != nil {
		t.Fatal(err)
	}
	products, buy := "/api/v1/products", fmt.Sprintf("/api/v1/products/%d/purchase", gated.ID)
	var (
		bought api.Order
		audit  api.Audit
	)
	const product = "created_at id initial_stock name sold stock strategy think_ms updated_at"
	const audited = "consistent duplicate_users ended initial_stock orders oversold pending product_id restocked sold stock"
	for _, r := range []struct {
		method, path, token, body string
		status                    int
		into                      any    // a pointer to the contract type
		keys                      string // the body's keys, nested ones as parent.key
	}{
		{"POST", products, adminToken, `{"name":"contract","stock":3,"strategy":"optimistic","think_ms":2}`, 201, new(api.Product), product},
		{"POST", products, adminToken, `{"name":"lab","stock":3,"strategy":"lab","lock":"lease","lease_ms":300}`, 201, new(api.Product),
			product + " lease_ms lock"},
		{"GET", fmt.Sprintf("%s/%d", products, gated.ID), "", ``, 200, new(api.Product), product},
		{"POST", buy, "", `{"user_id":1}`, 201, &bought, "created_at order_id product_id status user_id"},
		{"GET", fmt.Sprintf("%s/%d/orders/1", products, gated.ID), "", ``, 200, new(api.Order), "created_at order_id product_id status user_id"},
		{"GET", fmt.Sprintf("%s/%d/audit", products, gated.ID), adminToken, ``, 200, &audit,
			audited + " redis.agrees redis.buyers redis.pending redis.seeded redis.stock"},
		{"GET", fmt.Sprintf("%s/%d/audit", products, plain.ID), adminToken, ``, 200, new(api.Audit), audited},
		{"POST", fmt.Sprintf("%s/%d/pause", products, plain.ID), adminToken, ``, 200, new(api.Product), product + " paused_at"},
		{"POST", fmt.Sprintf("%s/%d/resume", products, plain.ID), adminToken, ``, 200, new(api.Product), product},
		{"POST", fmt.Sprintf("%s/%d/restock", products, plain.ID), adminToken, `{"units":2,"key":"k"}`, 200, new(api.Restock),
			"created_at key product_id units"},
		{"POST", fmt.Sprintf("%s/%d/end", products, plain.ID), adminToken, ``, 200, new(api.Product), product + " ends_at"},
		{"GET", fmt.Sprintf("%s/%d", products, lined.ID), "", ``, 200, new(api.Product), product + " line.rate line.window_ms starts_at"},
		{"POST", fmt.Sprintf("%s/%d/line", products, lined.ID), "", `{"user_id":1}`, 202, new(api.LinePlace),
			"called_at drawn product_id starts_at state user_id wait_ms"},
		{"GET", fmt.Sprintf("%s/%d/line/2", products, lined.ID), "", ``, 200, new(api.LinePlace), "drawn product_id starts_at state user_id wait_ms"},
		{"GET", "/healthz", "", ``, 200, new(api.Health), "status"},
		{"GET", "/readyz", "", ``, 200, new(api.Readiness), "checks.postgres checks.redis checks.serving status"},
	} {
		status, _, body, _, err := s.do(r.method, r.path, r.token, r.body)
		if err != nil || status != r.status {
			t.Fatalf("%s %s = %d %s %v, want %d", r.method, r.path, status, body, err, r.status)
		}
		decodeExact(t, body, r.into)
		want := strings.Fields(r.keys)
		slices.Sort(want)
		if got := keysOf("", jsonValue(t, body)); !slices.Equal(got, want) {
			t.Errorf("%s %s: keys %v, want %v", r.method, r.path, got, want)
		}
	}
	if err := s.API.Ready(context.Background()); err != nil {
		t.Errorf("Ready = %v", err)
	}
	if bought.ID == 0 || bought.UserID != 1 || bought.ProductID != gated.ID || audit.Redis == nil {
		t.Fatalf("purchase answered %+v, audit %+v: want an order and the gate's part", bought, audit)
	}

	refusals := append(badInputs(plain.ID), []badInput{
		{"bought before", "POST", buy, "", `{"user_id":1}`, 409, api.CodeAlreadyPurchased},
		{"sold out", "POST", fmt.Sprintf("%s/%d/purchase", products, empty.ID), "", `{"user_id":1}`, 409, api.CodeSoldOut},
		{"no order", "GET", fmt.Sprintf("%s/%d/orders/2", products, gated.ID), "", ``, 404, api.CodeOrderNotFound},
		{"no route", "GET", "/api/v2/products", "", ``, 404, api.CodeNotFound},
		{"no line", "GET", fmt.Sprintf("%s/%d/line/1", products, plain.ID), "", ``, 404, api.CodeNoLine},
	}...)
	for _, r := range refusals {
		p := problemOf(t, s, r.method, r.path, r.token, r.body)
		if p.Status != r.status || p.Code != r.code || api.Status(p.Code) != p.Status {
			t.Errorf("%s: %s %s = %+v, want %d %s", r.name, r.method, r.path, p, r.status, r.code)
		}
		if p.Code == api.CodeAlreadyPurchased && p.OrderID != bought.ID {
			t.Errorf("%s: order_id %d, want %d", r.name, p.OrderID, bought.ID)
		}
	}
	disabled := newStackOnToken(t, s, "")
	if p := problemOf(t, disabled, "POST", products, "any", `{"name":"x","stock":1}`); p.Code != api.CodeAdminDisabled {
		t.Errorf("create with admin routes disabled = %+v, want %s", p, api.CodeAdminDisabled)
	}
}

// problemOf sends a raw request that must be refused and returns what client.CheckResponse
// makes of the answer, after checking that its body is exactly an api.Problem.
func problemOf(t *testing.T, s *stack, method, path, token, body string) *api.Problem {
	t.Helper()
	status, _, b, hdr, err := s.do(method, path, token, body)
	if err != nil {
		t.Fatal(err)
	}
	decodeExact(t, b, new(api.Problem))
	resp := &http.Response{StatusCode: status, Header: hdr, Body: io.NopCloser(bytes.NewReader(b))}
	var p *api.Problem
	if err := client.CheckResponse(resp); !errors.As(err, &p) {
		t.Fatalf("%s %s: CheckResponse = %v, want an *api.Problem", method, path, err)
	}
	return p
}

// decodeExact decodes body into v, a pointer to a contract type, refusing unknown fields,
// and checks that v encodes back to the same JSON value.
func decodeExact(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%T from %s: %v", v, body, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if sent, typed := jsonValue(t, body), jsonValue(t, again); !reflect.DeepEqual(sent, typed) {
		t.Errorf("%T: the server sent %s, the type encodes %s", v, body, again)
	}
}

// keysOf lists the keys of the JSON object v and of the objects in it, sorted, each
// prefixed with its parents' keys.
func keysOf(prefix string, v any) []string {
	var keys []string
	for k, e := range v.(map[string]any) {
		if obj, ok := e.(map[string]any); ok {
			keys = append(keys, keysOf(prefix+k+".", obj)...)
			continue
		}
		keys = append(keys, prefix+k)
	}
	slices.Sort(keys)
	return keys
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}
