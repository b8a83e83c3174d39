// Package client is a typed Go client of seckill's HTTP API, speaking the contract of
// package api. Every answer other than 2xx comes back as an *api.Problem, so callers branch
// on the problem's code:
//
//	c := client.New("http://127.0.0.1:8080", &client.Options{AdminToken: token})
//	p, err := c.CreateProduct(ctx, api.NewProduct{Name: "widget", Stock: new(100)})
//	...
//	_, err = c.Purchase(ctx, p.ID, userID)
//	var prob *api.Problem
//	if errors.As(err, &prob) && prob.Code == api.CodeSoldOut { ... }
//
// The problem's status is the response's, and its RetryAfter field holds the response's
// Retry-After header (on 429, 503 and 409 sale_not_started). An answer whose body is not a problem (from a proxy
// in front of the API, or /readyz's 503) is a Problem with the status and no code. An error
// that is not an *api.Problem means no answer came (the connection failed, ctx ended, the
// client's timeout passed) or the answer could not be read; it wraps the cause, so
// errors.Is(err, context.DeadlineExceeded) works. Every error names the request's method and
// path. The methods never retry. CheckResponse does the same for requests the methods
// cannot send.
package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// Options configures a Client. The zero value (or nil) means the defaults.
type Options struct {
	// AdminToken is the bearer token of the admin routes. Default: none.
	AdminToken string
	// HTTPClient sends the requests. Default: a client with a 10 s timeout per request.
	HTTPClient *http.Client
	// BuyerToken returns a user's bearer token for the buyer routes; its error is the call's.
	// Default: none.
	BuyerToken func(ctx context.Context, userID int64) (string, error)
}

// DefaultTimeout is the timeout of the default HTTPClient.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds how much of an answer's body is read.
const maxAnswer = 1 << 20

// Client calls one seckill API. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	buyer func(ctx context.Context, userID int64) (string, error)
	hc    *http.Client
}

// New returns a client of the API at baseURL ("http://host:port"); opts may be nil.
func New(baseURL string, opts *Options) *Client {
	if opts == nil {
		opts = &Options{}
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: opts.AdminToken, buyer: opts.BuyerToken, hc: hc}
}

// CreateProduct creates a product (admin): POST /api/v1/products.
func (c *Client) CreateProduct(ctx context.Context, np api.NewProduct) (api.Product, error) {
	var p api.Product
	err := c.do(ctx, http.MethodPost, "/api/v1/products", admin, np, &p)
	return p, err
}

// Product reads product id: GET /api/v1/products/{id}.
func (c *Client) Product(ctx context.Context, id int64) (api.Product, error) {
	var p api.Product
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d", id), anyone, nil, &p)
	return p, err
}

// Purchase buys the product for the user and returns the committed order; retrying is safe.
// Errors: *api.Problem, or *AcceptedError for a queued purchase (poll OrderOf).
func (c *Client) Purchase(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/purchase", productID), userID,
		api.Purchase{UserID: userID}, &o)
	return o, err
}

// PurchaseBundle buys each product for the user, all or nothing; a product's refusal names
// it in Problem.ProductID.
func (c *Client) PurchaseBundle(ctx context.Context, userID int64, productIDs ...int64) (api.Bundle, error) {
	var b api.Bundle
	err := c.do(ctx, http.MethodPost, "/api/v1/bundles/purchase", userID,
		api.BundlePurchase{UserID: userID, ProductIDs: productIDs}, &b)
	return b, err
}

// JoinLine takes the user's place in the product's line (POST, 202), or returns the one it
// had. Codes: api.CodeNoLine, api.CodeSaleEnded.
func (c *Client) JoinLine(ctx context.Context, productID, userID int64) (api.LinePlace, error) {
	var pl api.LinePlace
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/line", productID), userID,
		api.Purchase{UserID: userID}, &pl)
	return pl, err
}

// LinePlace reads the user's place in the product's line. Codes: api.CodeNoLine.
func (c *Client) LinePlace(ctx context.Context, productID, userID int64) (api.LinePlace, error) {
	var pl api.LinePlace
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d/line/%d", productID, userID), userID, nil, &pl)
	return pl, err
}

// OrderOf reads the user's order of the product, or api.CodeOrderNotFound.
func (c *Client) OrderOf(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d/orders/%d", productID, userID), userID, nil, &o)
	return o, err
}

// Pay pays the user's reservation and returns it; it is idempotent. Codes: api.CodeOrderExpired,
// api.CodeOrderCancelled, api.CodeOrderNotFound.
func (c *Client) Pay(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/orders/%d/pay", productID, userID), userID, nil, &o)
	return o, err
}

// Cancel cancels the user's reservation and returns it; it is idempotent. Codes:
// api.CodeOrderPaid, api.CodeOrderExpired, api.CodeOrderNotFound.
func (c *Client) Cancel(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/orders/%d/cancel", productID, userID), userID, nil, &o)
	return o, err
}

// Audit computes the audit of product id (admin): GET /api/v1/products/{id}/audit.
func (c *Client) Audit(ctx context.Context, id int64) (api.Audit, error) {
	var a api.Audit
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d/audit", id), admin, nil, &a)
	return a, err
}

// Ready asks GET /readyz once; a 503 is an *api.Problem with no code. It never retries.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.Readiness(ctx)
	return err
}

// Readiness is Ready that also returns the 200 body.
func (c *Client) Readiness(ctx context.Context) (api.Readiness, error) {
	var r api.Readiness
	err := c.do(ctx, http.MethodGet, "/readyz", anyone, nil, &r)
	return r, err
}
