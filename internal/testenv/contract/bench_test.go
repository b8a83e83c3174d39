package contract_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// BenchmarkCheck measures what checking one purchase exchange costs the tests, as a sale
// sends them: each buyer a user of its own, answered 201 with its own order, or 409 sold_out
// (the same body every time).
func BenchmarkCheck(b *testing.B) {
	d, err := contract.Load()
	if err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct {
		name, ct string
		status   int
		body     func(i int) string
	}{
		{"bought", "application/json; charset=utf-8", 201, func(i int) string {
			return fmt.Sprintf(`{"order_id":%d,"product_id":1,"user_id":%d,"created_at":"2026-11-26T12:00:00Z"}`, i+1, i+1)
		}},
		{"sold_out", api.ContentTypeProblem, 409, func(int) string { return problem("sold_out", 409) }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			resp := &http.Response{StatusCode: bb.status, Header: http.Header{"Content-Type": {bb.ct}}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				reqBody := fmt.Sprintf(`{"user_id":%d}`, i)
				req, _ := http.NewRequest("POST", "http://127.0.0.1:1/api/v1/products/1/purchase", strings.NewReader(reqBody))
				req.Header.Set("Content-Type", "application/json")
				if err := d.Check(req, []byte(reqBody), resp, []byte(bb.body(i))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
