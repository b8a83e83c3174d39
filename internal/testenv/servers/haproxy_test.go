package servers_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// backend is a plain HTTP server on loopback that names itself in its answers, with a
// /readyz that a test turns to 503, and a POST /cut that closes the connection unanswered.
type backend struct {
	name     string
	addr     string
	draining atomic.Bool
	cuts     atomic.Int64 // POST /cut requests received
}

func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name, addr: ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if b.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, b.name) })
	mux.HandleFunc("POST /cut", func(w http.ResponseWriter, _ *http.Request) {
		b.cuts.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // the request reached the server, and no answer comes back
		}
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b
}

// TestHAProxyDrainAndNoRetry: with the project's configuration, HAProxy spreads requests over
// the servers whose /readyz answers 200, stops sending to one whose /readyz turns 503 (a
// draining API) while it still serves, and never sends a POST that reached a server again:
// a connection cut before the answer is a 502 to the client, after exactly one try.
func TestHAProxyDrainAndNoRetry(t *testing.T) {
	testenv.SkipShort(t, "haproxy")
	t.Parallel()
	one, two := startBackend(t, "one"), startBackend(t, "two")
	h := servers.StartHAProxy(t, []string{one.addr, two.addr}, nil)
	c := &http.Client{Timeout: 5 * time.Second}
	get := func() string {
		resp, err := c.Get(h.Base + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	count := func() map[string]int {
		n := map[string]int{}
		for range 10 {
			n[get()]++
		}
		return n
	}
	if n := count(); n["one"] == 0 || n["two"] == 0 {
		t.Errorf("answers by server = %v, want both", n)
	}

	one.draining.Store(true)
	h.WaitState(5*time.Second, "DOWN", "api1")
	if n := count(); n["one"] != 0 || n["two"] != 10 {
		t.Errorf("answers by server with api1 draining = %v, want all from two", n)
	}
	one.draining.Store(false)
	h.WaitState(5*time.Second, "UP", "api1")

	// On a new connection: on a reused one, HAProxy answers a cut with a cut (http-reuse
	// safe), which a client sees as no answer, the same "outcome unknown".
	fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := fresh.Post(h.Base+"/cut", "text/plain", strings.NewReader("buy"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusBadGateway; got != want {
		t.Errorf("POST cut by the server: status = %d, want %d", got, want)
	}
	if got, want := one.cuts.Load()+two.cuts.Load(), int64(1); got != want {
		t.Errorf("POST cut by the server reached the servers %d times, want %d (never retried)", got, want)
	}
}
