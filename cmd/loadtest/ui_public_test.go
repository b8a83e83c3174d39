package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/liveui"
	"github.com/seckill/seckill/internal/loadgen"
)

// TestUIPublicWantsAccessToken: -public refuses to start without an access token of its own
// (at least 16 characters, not the admin token); with one, every request must carry it,
// the page and its event streams too. On the code before, -public started with none.
func TestUIPublicWantsAccessToken(t *testing.T) {
	t.Parallel()
	const access = "ui-test-access-token-0123"
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "LOADTEST_UI_ACCESS_TOKEN"},
		{map[string]string{"LOADTEST_UI_ACCESS_TOKEN": "short"}, "at least 16"},
		{map[string]string{"LOADTEST_UI_ACCESS_TOKEN": access, "ADMIN_TOKEN": access}, "ADMIN_TOKEN"},
	} {
		// Bounded: the code before served until the context ended.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := run(ctx, []string{"loadtest", "ui", "-public", "-addr", "127.0.0.1:0", "-dir", t.TempDir()},
			func(k string) string { return c.env[k] }, io.Discard, io.Discard)
		cancel()
		var usage loadgen.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ui -public with env %v = %v, want a usage error naming %s", c.env, err, c.want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"loadtest", "ui", "-public", "-addr", "127.0.0.1:0", "-dir", t.TempDir(), "-targets", "http://127.0.0.1:1"},
			func(k string) string { return map[string]string{"LOADTEST_UI_ACCESS_TOKEN": access}[k] }, w, io.Discard)
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ui -public: %v", err)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("ui -public: %v", err)
	}
	go io.Copy(io.Discard, out)
	base := strings.TrimSuffix(strings.Fields(line)[2], "/")
	get := func(path, user, pass, host string) *http.Response {
		req, _ := http.NewRequest("GET", base+path, nil)
		if user != "" || pass != "" {
			req.SetBasicAuth(user, pass)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/", "/assets/app.js", "/api/options", "/api/runs", "/api/runs/20990101-000000-zzzz/events"} {
		if resp := get(path, "", "", ""); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("GET %s without the access token = %d %q, want 401 asking for basic auth", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if resp := get(path, "teacher", access+"x", ""); resp.StatusCode != 401 {
			t.Errorf("GET %s with a wrong access token = %d, want 401", path, resp.StatusCode)
		}
	}
	if resp := get("/api/options", "", access, "seckill.example:8090"); resp.StatusCode != 200 {
		t.Errorf("GET /api/options with the access token, any Host = %d, want 200", resp.StatusCode)
	}
	// The page and its token, behind the access token: a POST needs both.
	client := &http.Client{Transport: basicAuth{"teacher", access}}
	tok := pageTokenVia(t, client, base)
	body := `{"kind":"strategies","strategies":["dlock"],"stock":-1,"buyers":8,"duration_s":1}`
	for _, c := range []struct {
		client *http.Client
		token  string
		status int
	}{{client, tok, 400}, {client, "", 403}, {http.DefaultClient, tok, 401}} {
		req, _ := http.NewRequest("POST", base+"/api/runs", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", base)
		req.Header.Set(liveui.PageTokenHeader, c.token)
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("POST a run (access token %v, page token %v) = %d, want %d", c.client == client, c.token != "", resp.StatusCode, c.status)
		}
	}
}

// basicAuth is a RoundTripper that adds basic auth to every request.
type basicAuth struct{ user, pass string }

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.pass)
	return http.DefaultTransport.RoundTrip(r)
}

// pageTokenVia reads the per-start token from the page base serves, with client, as the
// page's script does.
func pageTokenVia(t *testing.T, client *http.Client, base string) string {
	t.Helper()
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`<meta name="seckill-page-token" content="([^"]+)">`).FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("GET %s/ = %d: no page token in the page", base, resp.StatusCode)
	}
	return string(m[1])
}
