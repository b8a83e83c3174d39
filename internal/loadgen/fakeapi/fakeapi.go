// Package fakeapi serves a stand-in for the seckill API, for the tests of the load tester
// (internal/loadgen, internal/liveui, cmd/loadtest): it speaks the same HTTP contract
// (internal/api) and keeps its products in memory. Only tests import it.
package fakeapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
)

// API stands in for the seckill API in the tests of the attack loop and the reports: it
// speaks the same HTTP contract and keeps its products in memory. Its naive strategy
// oversells on purpose (it sells twice the stock) so that the verdicts can be tested. Its
// queue strategy answers every other buyer 202 accepted and writes that order later: one
// queued order per audit request, as consumers drain a stream.
type API struct {
	mu       sync.Mutex
	products map[int64]*fakeProduct
	// oversells names the strategies that oversell, as naive does: each sells twice its stock.
	oversells map[string]bool
	// busyEvery answers every n-th purchase 503 busy (0: never).
	busyEvery int
	purchases int
	// checks are what GET /readyz lists: {"fake": "ok"}, and "etcd" for a fake whose locks
	// are in etcd (NewEtcd).
	checks map[string]string
}

type fakeProduct struct {
	api.Product
	buyers map[int64]bool
	queued int // queue strategy: buyers answered 202 whose order is not written yet
}

// New serves a fake API until the test ends and returns it with its base URL.
func New(t testing.TB) (*API, string) {
	t.Helper()
	f := &API{products: map[int64]*fakeProduct{}, oversells: map[string]bool{"naive": true},
		checks: map[string]string{"fake": api.StateOK}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		reply(w, http.StatusOK, api.Readiness{Status: api.StateOK, Checks: f.checks})
	})
	mux.HandleFunc("POST /api/v1/products", f.create)
	mux.HandleFunc("GET /api/v1/products/{id}", f.get)
	mux.HandleFunc("POST /api/v1/products/{id}/purchase", f.purchase)
	mux.HandleFunc("GET /api/v1/products/{id}/audit", f.audit)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// NewEtcd is New with the "etcd" check on /readyz that an API with
// LOCK_BACKEND=etcd lists.
func NewEtcd(t testing.TB) (*API, string) {
	t.Helper()
	f, base := New(t)
	f.mu.Lock()
	f.checks = map[string]string{"fake": api.StateOK, "etcd": api.StateOK}
	f.mu.Unlock()
	return f, base
}

// SetOversells says whether the fake's strategy oversells from now on.
func (f *API) SetOversells(strategy string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oversells[strategy] = on
}

// Products returns the products made so far, in no order.
func (f *API) Products() []api.Product {
	f.mu.Lock()
	defer f.mu.Unlock()
	ps := make([]api.Product, 0, len(f.products))
	for _, p := range f.products {
		ps = append(ps, p.Product)
	}
	return ps
}

// problem answers the contract's problem for code.
func problem(w http.ResponseWriter, code string) {
	p := api.NewProblem(code, "")
	w.Header().Set("Content-Type", api.ContentTypeProblem)
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *API) create(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer secret" {
		problem(w, api.CodeUnauthorized)
		return
	}
	var np api.NewProduct
	if err := json.NewDecoder(r.Body).Decode(&np); err != nil || np.Stock == nil {
		problem(w, api.CodeInvalidRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := api.Product{ID: int64(len(f.products) + 1), Name: np.Name, Stock: *np.Stock, InitialStock: *np.Stock,
		Strategy: np.Strategy, ThinkMS: np.ThinkMS}
	f.products[p.ID] = &fakeProduct{Product: p, buyers: map[int64]bool{}}
	reply(w, http.StatusCreated, p)
}

func (f *API) lookup(w http.ResponseWriter, r *http.Request) *fakeProduct {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if p := f.products[id]; p != nil {
		return p
	}
	problem(w, api.CodeProductNotFound)
	return nil
}

func (f *API) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.lookup(w, r); p != nil {
		reply(w, http.StatusOK, p.Product)
	}
}

func (f *API) purchase(w http.ResponseWriter, r *http.Request) {
	var body api.Purchase
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.UserID <= 0 {
		problem(w, api.CodeInvalidRequest)
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
		problem(w, api.CodeBusy)
	case p.buyers[body.UserID]:
		problem(w, api.CodeAlreadyPurchased)
	case p.Stock == 0 && !(naive && len(p.buyers) < 2*p.InitialStock):
		problem(w, api.CodeSoldOut)
	default:
		p.buyers[body.UserID] = true
		if p.Stock > 0 && (!naive || len(p.buyers)%2 == 0) { // naive loses every other update
			p.Stock--
		}
		if p.Strategy == string(inventory.StrategyQueue) && len(p.buyers)%2 == 0 {
			p.queued++
			reply(w, http.StatusAccepted, api.Accepted{Status: "accepted", ProductID: p.ID, UserID: body.UserID})
			return
		}
		reply(w, http.StatusCreated, api.Order{ID: int64(len(p.buyers)), ProductID: p.ID, UserID: body.UserID, Status: api.StatusPaid})
	}
}

func (f *API) audit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.lookup(w, r)
	if p == nil {
		return
	}
	if p.queued > 0 { // a consumer writes one queued order
		p.queued--
	}
	orders := len(p.buyers) - p.queued // p.Stock is the gate's: PostgreSQL's is p.Stock + p.queued
	a := api.Audit{
		ProductID: p.ID, InitialStock: p.InitialStock, Stock: p.Stock + p.queued, Orders: orders,
		Sold: p.InitialStock - p.Stock - p.queued, Oversold: max(0, orders-p.InitialStock),
	}
	a.Consistent = a.Orders == a.Sold && a.Oversold == 0
	if p.Strategy == "redis" {
		a.Redis = &api.GateAudit{Seeded: true, Stock: int64(p.Stock), Buyers: int64(orders), Agrees: true}
	}
	if p.Strategy == string(inventory.StrategyQueue) {
		a.Queue = &api.QueueAudit{Seeded: true, Stock: int64(p.Stock), Buyers: int64(len(p.buyers)),
			Queued: int64(p.queued), Agrees: true}
	}
	reply(w, http.StatusOK, a)
}
