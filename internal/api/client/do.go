package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/seckill/seckill/internal/api"
)

// Who a request is sent as; a user id (> 0) sends that buyer's token.
const (
	anyone int64 = 0
	admin  int64 = -1 // the admin token
)

// do sends one request as who (anyone, admin, or a user id), with body in encoded as JSON
// unless nil, and decodes a 2xx answer into out. Any other answer is returned as an *api.Problem,
// anything that kept an answer from being read as a wrapped error; both are prefixed with
// the method and path.
func (c *Client) do(ctx context.Context, method, path string, who int64, in, out any) error {
	if err := c.roundTrip(ctx, method, path, who, in, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) roundTrip(ctx context.Context, method, path string, who int64, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json, "+api.ContentTypeProblem)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case who == admin && c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	case who > 0 && c.buyer != nil:
		token, err := c.buyer(ctx, who)
		if err != nil {
			return fmt.Errorf("buyer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := CheckResponse(resp); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("read answer: %s: %w", resp.Status, err)
	}
	if _, place := out.(*api.LinePlace); resp.StatusCode == http.StatusAccepted && !place { // a queued purchase: not written yet
		var a AcceptedError
		if err := json.Unmarshal(b, &a.Accepted); err != nil {
			return fmt.Errorf("decode answer: %s: %w", resp.Status, err)
		}
		a.Location = resp.Header.Get("Location")
		return &a
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode answer: %s: %w", resp.Status, err)
	}
	return nil
}

// AcceptedError is a purchase answered 202: queued, not written yet; poll Location (OrderOf).
type AcceptedError struct {
	api.Accepted
	Location string
}

func (e *AcceptedError) Error() string {
	return fmt.Sprintf("202 Accepted: purchase of product %d by user %d queued, not written yet; see %s",
		e.ProductID, e.UserID, e.Location)
}

// CheckResponse returns nil for a 2xx answer, else an *api.Problem or a read error. It reads up
// to 1 MiB of the body and does not close it.
func CheckResponse(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("read answer: %s: %w", resp.Status, err)
	}
	p := &api.Problem{}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType != api.ContentTypeProblem || json.Unmarshal(body, p) != nil {
		p = &api.Problem{Title: http.StatusText(resp.StatusCode), Detail: notProblem(body)}
	}
	p.Status = resp.StatusCode
	p.RetryAfter = resp.Header.Get("Retry-After")
	return p
}

// maxDetail bounds the detail taken from a body that is not a problem.
const maxDetail = 200

// notProblem describes a body that is not a problem for a Problem's detail: the unavailable
// dependencies of a readiness body, or the start of any other body (an answer from something in
// front of the API).
func notProblem(body []byte) string {
	var r api.Readiness
	if json.Unmarshal(body, &r) == nil && r.Status != "" {
		var down []string
		for name, state := range r.Checks {
			if state != api.StateOK {
				down = append(down, name+" "+state)
			}
		}
		if len(down) == 0 {
			return "not ready"
		}
		slices.Sort(down)
		return "not ready: " + strings.Join(down, ", ")
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(body), "\uFFFD"))
	if len(s) <= maxDetail {
		return s
	}
	cut := maxDetail
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
