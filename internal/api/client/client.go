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
// Retry-After header (on 429 and 503). An answer whose body is not a problem (from a proxy
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
	// AdminToken is sent as "Authorization: Bearer <token>" on the admin routes (creating a
	// product, the audit) and only there. Default: none, and those routes answer 401 or 403.
	AdminToken string
	// HTTPClient sends the requests. Default: a client with a 10 s timeout per request.
	HTTPClient *http.Client
	// BuyerToken, when set, gives the bearer token of a user, sent as "Authorization: Bearer
	// <token>" on the buyer routes (purchase, bundle, order lookup, pay, cancel) for the user
	// the call names: for an API with buyer identity on (docs/api.md#buyer-identity). An
	// error it returns is the call's, and nothing is sent. Default: no token.
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

// Purchase buys product productID for user userID: POST /api/v1/products/{id}/purchase.
// The order is committed when it returns nil. A user buys a product at most once, so a
// purchase that got no answer (or api.CodeOutcomeUnknown) may be retried: the retry answers
// the order or an *api.Problem with api.CodeAlreadyPurchased and its OrderID. A queue-strategy
// purchase not written within the API's QUEUE_WAIT is an *AcceptedError (202): poll OrderOf.
func (c *Client) Purchase(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/purchase", productID), userID,
		api.Purchase{UserID: userID}, &o)
	return o, err
}

// PurchaseBundle buys one unit of each product for userID, all or nothing:
// POST /api/v1/bundles/purchase. A product's verdict (sold out, already
// purchased, not found) is an *api.Problem whose ProductID names it.
func (c *Client) PurchaseBundle(ctx context.Context, userID int64, productIDs ...int64) (api.Bundle, error) {
	var b api.Bundle
	err := c.do(ctx, http.MethodPost, "/api/v1/bundles/purchase", userID,
		api.BundlePurchase{UserID: userID, ProductIDs: productIDs}, &b)
	return b, err
}

// OrderOf reads user userID's order of product productID as committed now:
// GET /api/v1/products/{id}/orders/{user_id}. No order is an *api.Problem with
// api.CodeOrderNotFound.
func (c *Client) OrderOf(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/products/%d/orders/%d", productID, userID), userID, nil, &o)
	return o, err
}

// Pay pays user userID's reservation of product productID:
// POST /api/v1/products/{id}/orders/{user_id}/pay. It answers the order, paid (also when it
// was paid already, or final from the start). A reservation past its pay_by is an
// *api.Problem with api.CodeOrderExpired, a cancelled one api.CodeOrderCancelled, none
// api.CodeOrderNotFound.
func (c *Client) Pay(ctx context.Context, productID, userID int64) (api.Order, error) {
	var o api.Order
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/orders/%d/pay", productID, userID), userID, nil, &o)
	return o, err
}

// Cancel cancels user userID's reservation of product productID, its unit going back on
// sale: POST /api/v1/products/{id}/orders/{user_id}/cancel. It answers the order, cancelled
// (also when it was cancelled already). A paid order is an *api.Problem with
// api.CodeOrderPaid, an expired one api.CodeOrderExpired, none api.CodeOrderNotFound.
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

// Ready asks GET /readyz once and returns nil when every dependency answers. A 503 is an
// *api.Problem with the status, no code, and a detail naming the dependencies that are
// unavailable. It does not retry: poll it until ctx ends to wait for a starting server.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.Readiness(ctx)
	return err
}

// Readiness is Ready that also returns the body of a 200: each dependency checked and its
// state (a check named "etcd" or "redlock" says where the product locks live).
func (c *Client) Readiness(ctx context.Context) (api.Readiness, error) {
	var r api.Readiness
	err := c.do(ctx, http.MethodGet, "/readyz", anyone, nil, &r)
	return r, err
}
