package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// The fuzz targets drive the whole API (internal/app over a real PostgreSQL schema and Redis
// prefix, one per fuzz process, set up outside the fuzz function) through its handler in
// memory. For any input: no 5xx, every 4xx is a problem whose code matches its status, and
// valid input is stored and answered back unchanged. `make fuzz` runs each for a few
// seconds; failing inputs land in testdata/fuzz/ and run with every `go test`.

const fuzzToken = "fuzz-admin-token"

// fuzzAPI wires the production API (nothing plugged in) on a fresh schema with a small pool, the per-user rate limiter on
// (with a budget no fuzz run reaches, so that its body handling is fuzzed too).
func fuzzAPI(f *testing.F) http.Handler {
	f.Helper()
	gdb, err := db.Open(testenv.Schema(f), db.PoolOptions{MaxOpen: 3})
	if err != nil {
		f.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	f.Cleanup(func() { sqlDB.Close() })
	rdb, prefix := testenv.Redis(f)
	a := app.New(app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: fuzzToken,
		RateLimits: httpapi.RateLimits{User: httpapi.Rate{N: 1_000_000, Per: time.Second}}})
	f.Cleanup(func() { a.Close() })
	return a.Handler
}

// call serves one request in memory. path is used as is, even when no client could send it.
func call(h http.Handler, method, path, token string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL = &url.URL{Path: path}
	req.RequestURI = path
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// checkAnswer fails on a 5xx, and on a 4xx that is not a well-formed problem with a code of
// the contract answered with its status, and nothing internal in it.
func checkAnswer(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code >= 500 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if w.Code < 400 {
		return
	}
	var p api.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("%d body is not a problem: %v: %s", w.Code, err, w.Body)
	}
	if api.Status(p.Code) != w.Code || p.Status != w.Code || !strings.HasSuffix(p.Type, "#error-"+p.Code) {
		t.Fatalf("%d answered with problem %+v", w.Code, p)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, api.ContentTypeProblem) {
		t.Fatalf("%d Content-Type = %q", w.Code, ct)
	}
	for _, leak := range []string{"SQL", "pgx", "gorm", "redis:", "goroutine", ".go:", "inventory:", "order:"} {
		if strings.Contains(p.Detail, leak) {
			t.Fatalf("problem detail leaks %q: %s", leak, p.Detail)
		}
	}
}

func createProduct(f *testing.F, h http.Handler, body string) int64 {
	f.Helper()
	w := call(h, http.MethodPost, "/api/v1/products", fuzzToken, []byte(body))
	var p api.Product
	if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &p) != nil {
		f.Fatalf("create product = %d %s", w.Code, w.Body)
	}
	return p.ID
}

// FuzzPurchaseBody: arbitrary purchase bodies for a product with stock to spare.
func FuzzPurchaseBody(f *testing.F) {
	for _, seed := range []string{
		`{"user_id":1}`, `{"user_id":0}`, `{"user_id":-1}`, `{"user_id":1.5}`, `{"user_id":"1"}`,
		`{"user_id":9223372036854775807}`, `{"user_id":9223372036854775808}`, `{"user_id":1e3}`,
		`{"USER_ID":2}`, `{"User_Id":2}`, `{"user_id":1,"USER_ID":2}`, `{"user_id":null}`, `{"user_id":3,"user_id":4}`,
		`{"user_id":1,"x":2}`, `{"user_id":1} {}`, `[]`, `null`, ``, `{"user_id":5}` + strings.Repeat(" ", 5000),
	} {
		f.Add([]byte(seed))
	}
	h := fuzzAPI(f)
	product := createProduct(f, h, fmt.Sprintf(`{"name":"fuzz","stock":%d,"strategy":"optimistic"}`, inventory.MaxStock))
	path := fmt.Sprintf("/api/v1/products/%d/purchase", product)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := call(h, http.MethodPost, path, "", body)
		checkAnswer(t, w)
		var req api.Purchase
		valid := httpapi.StrictDecode(body, &req) == nil && req.UserID > 0
		switch {
		case w.Code == http.StatusCreated:
			var o api.Order
			if err := json.Unmarshal(w.Body.Bytes(), &o); err != nil || !valid || o.UserID != req.UserID || o.ProductID != product {
				t.Fatalf("201 %s for body %q (reference: valid %v)", w.Body, body, valid)
			}
		case w.Code == http.StatusConflict:
			if !valid {
				t.Fatalf("409 %s for invalid body %q", w.Body, body)
			}
		case valid || (w.Code != http.StatusBadRequest && w.Code != http.StatusRequestEntityTooLarge):
			t.Fatalf("%d %s for body %q (reference: valid %v)", w.Code, w.Body, body, valid)
		}
	})
}

// FuzzCreateProductBody: arbitrary product-creation bodies with the admin token.
func FuzzCreateProductBody(f *testing.F) {
	for _, seed := range []string{
		`{"name":"w","stock":1}`, `{"name":"w","stock":0,"strategy":"redis","think_ms":5}`,
		`{"name":"w","stock":100000000,"strategy":"naive","think_ms":10000}`, `{"name":"w","stock":100000001}`,
		`{"name":"w","stock":1,"think_ms":-1}`, `{"name":"w","stock":1.0}`, `{"name":"w","stock":null}`,
		`{"name":"","stock":1}`, `{"name":"` + strings.Repeat("é", 200) + `","stock":1}`,
		`{"name":"` + strings.Repeat("é", 201) + `","stock":1}`, `{"name":"\ud800","stock":1}`,
		`{"name":"w","stock":1,"strategy":"DLOCK"}`,
		`{"name":"w","stock":1,"id":5}`, `{"name":1,"stock":1}`, `{"name":"w","stock":1}x`, `{`,
		`{"name":"w","stock":1,"stock":2}`, `{"name":"w","Stock":1}`, `{"NAME":"x","name":"w","stock":1}`,
	} {
		f.Add([]byte(seed))
	}
	h := fuzzAPI(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := call(h, http.MethodPost, "/api/v1/products", fuzzToken, body)
		checkAnswer(t, w)
		var req api.NewProduct
		valid := httpapi.StrictDecode(body, &req) == nil && req.Stock != nil
		np := inventory.NewProduct{Name: req.Name, Strategy: inventory.Strategy(req.Strategy), ThinkMS: req.ThinkMS,
			LabLock: req.Lock, LeaseMS: req.LeaseMS, Fair: req.Fair, PayWithinMS: req.PayWithinMS}
		if valid {
			np.Stock = *req.Stock
			// The production build's rules: no teaching strategy, no think_ms (fuzzAPI plugs nothing in).
			valid = np.Validate() == nil && np.ThinkMS == 0
		}
		if w.Code != http.StatusCreated {
			if valid || (w.Code != http.StatusBadRequest && w.Code != http.StatusRequestEntityTooLarge) {
				t.Fatalf("%d %s for body %q (reference: valid %v)", w.Code, w.Body, body, valid)
			}
			return
		}
		if !valid {
			t.Fatalf("201 %s for invalid body %q", w.Body, body)
		}
		checkStored(t, h, w, np)
	})
}

// checkStored checks that the product created (answer w) and read back is np.
func checkStored(t *testing.T, h http.Handler, w *httptest.ResponseRecorder, np inventory.NewProduct) {
	t.Helper()
	var created api.Product
	if err := json.Unmarshal(w.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	r := call(h, http.MethodGet, "/api/v1/products/"+strconv.FormatInt(created.ID, 10), "", nil)
	var got api.Product
	if r.Code != http.StatusOK || json.Unmarshal(r.Body.Bytes(), &got) != nil {
		t.Fatalf("get created product = %d %s", r.Code, r.Body)
	}
	for _, p := range []api.Product{created, got} {
		if p.Name != np.Name || p.Stock != np.Stock || p.InitialStock != np.Stock || p.Strategy != string(np.Strategy) || p.ThinkMS != np.ThinkMS {
			t.Fatalf("stored %+v, want %+v", p, np)
		}
	}
}

// FuzzProductID: arbitrary path ids on every route that takes one.
func FuzzProductID(f *testing.F) {
	for _, seed := range []string{
		"1", "0", "-1", "+1", "01", " 1", "1 ", "abc", "", "9223372036854775807", "9223372036854775808",
		"1e3", "0x10", "１", "1/2", "..", "%31", "1?x=1", "\x00",
	} {
		f.Add(seed)
	}
	h := fuzzAPI(f)
	product := createProduct(f, h, `{"name":"fuzz","stock":1000}`)
	f.Add(strconv.FormatInt(product, 10))
	f.Fuzz(func(t *testing.T, id string) {
		base := "/api/v1/products/" + id
		n, err := strconv.ParseInt(id, 10, 64)
		valid := err == nil && n > 0 && !strings.Contains(id, "/")
		for _, r := range []struct{ method, path, token, body string }{
			{http.MethodGet, base, "", ""},
			{http.MethodPost, base + "/purchase", "", `{"user_id":1}`},
			{http.MethodGet, base + "/audit", fuzzToken, ""},
		} {
			w := call(h, r.method, r.path, r.token, []byte(r.body))
			checkAnswer(t, w)
			if w.Code == http.StatusBadRequest && valid || w.Code < 300 && !valid {
				t.Fatalf("%s %q = %d %s (reference: valid %v)", r.method, r.path, w.Code, w.Body, valid)
			}
		}
	})
}
