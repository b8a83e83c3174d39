package liveui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
)

// newTestUI serves a loadtest ui of its own (runs kept in a temporary directory) whose
// environment is env, with the default ceilings, and returns its base URL.
func newTestUI(t *testing.T, targets string, env map[string]string) (string, *Server) {
	t.Helper()
	fixed, err := FixedTargets("-targets", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	return serveTestUI(t, Config{Targets: fixed, Limits: DefaultLimits}, env)
}

// serveTestUI serves a loadtest ui of c (runs kept in a temporary directory unless c.Dir)
// whose environment is env, and returns its base URL.
func serveTestUI(t *testing.T, c Config, env map[string]string) (string, *Server) {
	t.Helper()
	if c.Dir == "" {
		c.Dir = t.TempDir()
	}
	c.Compare, c.Lab = fromEnv(env)
	u, err := New(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(u.Handler())
	t.Cleanup(func() { u.Close(); srv.Close() })
	return srv.URL, u
}

// fromEnv is what loadtest ui's command line gives runs to start from when its environment
// is env and no flag of compare or lab is set: their defaults, and the variables they read.
func fromEnv(env map[string]string) (loadgen.Config, loadgen.LabConfig) {
	c := loadgen.DefaultConfig()
	c.ExpectNaive, c.AdminToken = true, env["ADMIN_TOKEN"]
	or := func(v *string, key string) {
		if s := env[key]; s != "" {
			*v = s
		}
	}
	or(&c.DatabaseURL, "DATABASE_URL")
	or(&c.RedisAddr, "REDIS_ADDR")
	or(&c.RedisPrefix, "REDIS_KEY_PREFIX")
	lab := loadgen.LabConfig{DatabaseURL: c.DatabaseURL, RedisAddr: c.RedisAddr, EtcdEndpoints: "http://127.0.0.1:2379"}
	or(&lab.EtcdEndpoints, "ETCD_ENDPOINTS")
	return c, lab
}

// pageToken reads the per-start token from the page base serves, as the page's script does.
func pageToken(t *testing.T, base string) string {
	t.Helper()
	return pageTokenVia(t, http.DefaultClient, base)
}

// pageTokenVia is pageToken with client.
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

// uiCall sends a request to the UI, with the headers given as name, value pairs (a "Host"
// pair sets the request's Host), and decodes its JSON answer into out (when not nil).
func uiCall(t *testing.T, method, url, contentType, body string, out any, headers ...string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp.StatusCode
}

type uiProblemBody struct{ Code, Detail string }

// readEvents reads a run's event stream until the server closes it (the run ended), for at
// most a minute.
func readEvents(t *testing.T, url string) (events []uiEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	var e uiEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			e.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "): // lines of data join with a line break
			if e.Data != nil {
				e.Data = append(e.Data, '\n')
			}
			e.Data = append(e.Data, strings.TrimPrefix(line, "data: ")...)
		case line == "" && e.Type != "":
			if !json.Valid(e.Data) {
				t.Fatalf("event %s: its data is not JSON: %s", e.Type, e.Data)
			}
			events = append(events, e)
			e = uiEvent{}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("events: %v (after %d)", err, len(events))
	}
	return events
}
