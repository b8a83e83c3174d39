package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// apiClient calls the seckill API outside the attack: creating the product, reading its
// stock for the progress line, and its audit. It is safe for concurrent use.
type apiClient struct {
	base  string
	token string
	hc    *http.Client
}

func newAPIClient(base, token string) *apiClient {
	return &apiClient{base: strings.TrimRight(base, "/"), token: token, hc: &http.Client{Timeout: 10 * time.Second}}
}

// product is the API's representation of a product.
type product struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Stock        int64  `json:"stock"`
	InitialStock int64  `json:"initial_stock"`
	Sold         int64  `json:"sold"`
	Strategy     string `json:"strategy"`
	ThinkMS      int    `json:"think_ms"`
}

// apiAudit is the body of GET /api/v1/products/{id}/audit.
type apiAudit struct {
	ProductID      int64 `json:"product_id"`
	InitialStock   int64 `json:"initial_stock"`
	Stock          int64 `json:"stock"`
	Orders         int64 `json:"orders"`
	Sold           int64 `json:"sold"`
	Oversold       int64 `json:"oversold"`
	DuplicateUsers int64 `json:"duplicate_users"`
	Consistent     bool  `json:"consistent"`
	Redis          *struct {
		Stock  int64 `json:"stock"`
		Buyers int64 `json:"buyers"`
		Agrees bool  `json:"agrees"`
	} `json:"redis,omitempty"`
}

// problemError is an RFC 9457 problem the API answered with.
type problemError struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

func (p *problemError) Error() string {
	if p.Detail == "" {
		return fmt.Sprintf("%d %s", p.Status, p.Code)
	}
	return fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail)
}

func (c *apiClient) createProduct(ctx context.Context, name string, stock int64, strategy string, thinkMS int) (product, error) {
	body := map[string]any{"name": name, "stock": stock, "strategy": strategy, "think_ms": thinkMS}
	var p product
	err := c.do(ctx, http.MethodPost, "/api/v1/products", true, body, http.StatusCreated, &p)
	if err != nil {
		return p, fmt.Errorf("create product on %s: %w", c.base, err)
	}
	return p, nil
}

func (c *apiClient) product(ctx context.Context, id int64) (product, error) {
	var p product
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d", id), false, nil, http.StatusOK, &p)
	return p, err
}

func (c *apiClient) audit(ctx context.Context, id int64) (apiAudit, error) {
	var a apiAudit
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d/audit", id), true, nil, http.StatusOK, &a); err != nil {
		return a, fmt.Errorf("audit product %d through %s: %w", id, c.base, err)
	}
	return a, nil
}

// ready returns nil once GET /readyz answers 200, polling until ctx ends.
func (c *apiClient) ready(ctx context.Context) error {
	var last error
	for {
		last = c.do(ctx, http.MethodGet, "/readyz", false, nil, http.StatusOK, nil)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not ready: %w", c.base, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// do sends one request and decodes a want-status answer into out; any other status becomes
// a *problemError (or a plain error when the body is not a problem).
func (c *apiClient) do(ctx context.Context, method, path string, admin bool, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if admin {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	if resp.StatusCode != want {
		var p problemError
		if json.Unmarshal(b, &p) == nil && p.Code != "" {
			p.Status = resp.StatusCode
			return fmt.Errorf("%s %s: %w", method, path, &p)
		}
		return fmt.Errorf("%s %s: %s: %.200s", method, path, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", method, path, err)
	}
	return nil
}
