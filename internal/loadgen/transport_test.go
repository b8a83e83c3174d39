package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestDeploymentHeaders: -header's headers reach the server on every request; a header the
// request carries already (the admin routes' Authorization) is kept; Host sets the host;
// malformed headers are refused.
func TestDeploymentHeaders(t *testing.T) {
	var mu sync.Mutex
	got := map[string][3]string{} // path -> Authorization, X-Ingress, Host
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = [3]string{r.Header.Get("Authorization"), r.Header.Get("X-Ingress"), r.Host}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	d := Deployment{Header: http.Header{}}
	for _, h := range []string{"Authorization: Bearer ingress", "x-ingress: k1", "Host: sale.example"} {
		name, value, err := ParseHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		d.Header.Add(name, value)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := d.apiClient(srv.URL, "admin-token")
	if _, err := c.Audit(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Product(ctx, 7); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][3]string{
		"/api/v1/products/7/audit": {"Bearer admin-token", "k1", "sale.example"},
		"/api/v1/products/7":       {"Bearer ingress", "k1", "sale.example"},
	} {
		if got[path] != want {
			t.Errorf("%s: Authorization, X-Ingress, Host = %q, want %q", path, got[path], want)
		}
	}
	for _, bad := range []string{"no colon", "two words: v", ": empty name", "X-Ok: a\nb", "Content-Length: 3", "Transfer-Encoding: chunked"} {
		if _, _, err := ParseHeader(bad); err == nil {
			t.Errorf("ParseHeader(%q) accepted it", bad)
		}
	}
}
