package contract

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// TB is the part of testing.TB the checks report to.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// maxListed is how many distinct violations a failing test lists.
const maxListed = 10

// Transport returns a transport that sends through next (http.DefaultTransport when nil)
// and checks every exchange against the description. Violations are gathered and reported
// with t.Errorf when the test cleans up, the same violation once with its count, so a
// test's goroutines may go on using the transport until then.
func Transport(t TB, next http.RoundTripper) http.RoundTripper {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	c := &checker{d: d, next: next, seen: map[string]int{}}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.seen) > 0 {
			t.Errorf("contract: %d answers broke internal/api/openapi.yaml:\n%s", c.broken, c.list())
		}
		c.seen = nil // later exchanges are not checked: the test is over
	})
	return c
}

// Client returns a copy of hc (a new client when nil) whose transport is checked.
func Client(t TB, hc *http.Client) *http.Client {
	t.Helper()
	var c http.Client
	if hc != nil {
		c = *hc
	}
	c.Transport = Transport(t, c.Transport)
	return &c
}

// checker is the transport Transport returns. It is safe for concurrent use.
type checker struct {
	d    *Description
	next http.RoundTripper

	mu     sync.Mutex
	seen   map[string]int // violation -> times; nil once the test is over
	broken int
}

// RoundTrip sends req and, when an answer came whole, checks the exchange. The request's
// and the answer's bodies are read in full to be checked, and handed on as they were.
func (c *checker) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("contract: read request body: %w", err)
		}
		reqBody = b
		req = cloneWith(req, b)
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = &replay{r: bytes.NewReader(respBody), err: err}
	if err != nil { // the answer was cut short: nothing whole to check
		return resp, nil
	}
	if verr := c.d.Check(req, reqBody, resp, respBody); verr != nil {
		c.record(verr.Error())
	}
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the transport it wraps, if it can.
func (c *checker) CloseIdleConnections() {
	if tr, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		tr.CloseIdleConnections()
	}
}

func (c *checker) record(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen != nil {
		c.seen[v]++
		c.broken++
	}
}

// list is the violations, the most frequent first, at most maxListed.
func (c *checker) list() string {
	vs := make([]string, 0, len(c.seen))
	for v := range c.seen {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool {
		if c.seen[vs[i]] != c.seen[vs[j]] {
			return c.seen[vs[i]] > c.seen[vs[j]]
		}
		return vs[i] < vs[j]
	})
	var b strings.Builder
	for i, v := range vs {
		if i == maxListed {
			fmt.Fprintf(&b, "  ... and %d more\n", len(vs)-maxListed)
			break
		}
		fmt.Fprintf(&b, "  %dx %s\n", c.seen[v], v)
	}
	return b.String()
}

// replay is an answer's body read ahead: its bytes, then the error that ended the read.
type replay struct {
	r   *bytes.Reader
	err error
}

func (r *replay) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err == io.EOF && r.err != nil {
		err = r.err
	}
	return n, err
}

func (r *replay) Close() error { return nil }
