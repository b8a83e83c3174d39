package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Metrics returns GET /metrics in Prometheus text format, up to 8 MiB.
func (c *Client) Metrics(ctx context.Context) ([]byte, error) {
	b, err := c.metrics(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	return b, nil
}

func (c *Client) metrics(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := CheckResponse(resp); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8*maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	return b, nil
}
