package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// fakeAPI stands in for the seckill API in the tests of the attack loop and the reports: it
// speaks the same HTTP contract and keeps its products in memory. Its naive strategy
// oversells on purpose (it sells twice the stock) so that the verdicts can be tested.
type fakeAPI struct {
	mu       sync.Mutex
	products map[int64]*fakeProduct
	// oversells names the strategies that oversell, as naive does: each sells twice its stock.
	oversells map[string]bool
	// busyEvery answers every n-th purchase 503 busy (0: never).
	busyEvery int
	purchases int
}

type fakeProduct struct {
	product
	buyers map[int64]bool
}

func newFakeAPI(t *testing.T) (*fakeAPI, string) {
	t.Helper()
	f := &fakeAPI{products: map[int64]*fakeProduct{}, oversells: map[string]bool{"naive": true}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("POST /api/v1/products", f.create)
	mux.HandleFunc("GET /api/v1/products/{id}", f.get)
	mux.HandleFunc("POST /api/v1/products/{id}/purchase", f.purchase)
	mux.HandleFunc("GET /api/v1/products/{id}/audit", f.audit)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func problem(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"code":%q}`, http.StatusText(status), status, code)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeAPI) create(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer secret" {
		problem(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	var p product
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		problem(w, http.StatusBadRequest, "invalid_request")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p.ID = int64(len(f.products) + 1)
	p.InitialStock = p.Stock
	f.products[p.ID] = &fakeProduct{product: p, buyers: map[int64]bool{}}
	reply(w, http.StatusCreated, p)
}

func (f *fakeAPI) lookup(w http.ResponseWriter, r *http.Request) *fakeProduct {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if p := f.products[id]; p != nil {
		return p
	}
	problem(w, http.StatusNotFound, "product_not_found")
	return nil
}

func (f *fakeAPI) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.lookup(w, r); p != nil {
		reply(w, http.StatusOK, p.product)
	}
}

func (f *fakeAPI) purchase(w http.ResponseWriter, r *http.Request) {
	var body struct {
		UserID int64 `json:"user_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.UserID <= 0 {
		problem(w, http.StatusBadRequest, "invalid_request")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.lookup(w, r)
	if p == nil {
		return
	}
	f.purchases++
	naive := f.oversells[p.Strategy]
	switch {
	case f.busyEvery > 0 && f.purchases%f.busyEvery == 0:
		w.Header().Set("Retry-After", "1")
		problem(w, http.StatusServiceUnavailable, "busy")
	case p.buyers[body.UserID]:
		problem(w, http.StatusConflict, "already_purchased")
	case p.Stock == 0 && !(naive && int64(len(p.buyers)) < 2*p.InitialStock):
		problem(w, http.StatusConflict, "sold_out")
	default:
		p.buyers[body.UserID] = true
		if p.Stock > 0 && (!naive || len(p.buyers)%2 == 0) { // naive loses every other update
			p.Stock--
		}
		reply(w, http.StatusCreated, map[string]int64{"order_id": int64(len(p.buyers)), "product_id": p.ID, "user_id": body.UserID})
	}
}

func (f *fakeAPI) audit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.lookup(w, r)
	if p == nil {
		return
	}
	orders := int64(len(p.buyers))
	a := apiAudit{
		ProductID: p.ID, InitialStock: p.InitialStock, Stock: p.Stock, Orders: orders,
		Sold: p.InitialStock - p.Stock, Oversold: max(0, orders-p.InitialStock),
	}
	a.Consistent = a.Orders == a.Sold && a.Oversold == 0
	if p.Strategy == "redis" {
		a.Redis = &struct {
			Stock  int64 `json:"stock"`
			Buyers int64 `json:"buyers"`
			Agrees bool  `json:"agrees"`
		}{p.Stock, orders, true}
	}
	reply(w, http.StatusOK, a)
}
