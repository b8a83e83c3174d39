package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/seckill/seckill/internal/api"
)

// Pause pauses product id's sale (admin) and returns the product. Code: api.CodeProductNotFound.
func (c *Client) Pause(ctx context.Context, id int64) (api.Product, error) {
	return c.control(ctx, id, "pause")
}

// Resume resumes product id's sale (admin) and returns the product. Code: api.CodeProductNotFound.
func (c *Client) Resume(ctx context.Context, id int64) (api.Product, error) {
	return c.control(ctx, id, "resume")
}

// End ends product id's sale now (admin) and returns the product. Codes: api.CodeProductNotFound,
// api.CodeSaleNotStarted.
func (c *Client) End(ctx context.Context, id int64) (api.Product, error) {
	return c.control(ctx, id, "end")
}

func (c *Client) control(ctx context.Context, id int64, action string) (api.Product, error) {
	var p api.Product
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/%s", id, action), admin, nil, &p)
	return p, err
}

// Restock adds units to product id's stock once per key (admin) and returns the restock the key
// committed first. Codes: api.CodeIdempotencyConflict, api.CodeInvalidRequest, api.CodeProductNotFound.
func (c *Client) Restock(ctx context.Context, id int64, key string, units int) (api.Restock, error) {
	var r api.Restock
	err := c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/products/%d/restock", id), admin, api.NewRestock{Units: units, Key: key}, &r)
	return r, err
}
