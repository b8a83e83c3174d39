package order

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
)

// TestExplainKeepsAnswers: an answer about the sale comes out of explain as it went in, even
// when the buyer has gone meanwhile (the answer is known; nothing was written).
func TestExplainKeepsAnswers(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range []error{
		fmt.Errorf("product 7: %w", inventory.ErrSoldOut),
		fmt.Errorf("user 3: %w", ErrAlreadyPurchased),
		inventory.ErrNotFound,
		fmt.Errorf("user 3, product 7: %w", ErrOrderNotFound),
	} {
		for _, ctx := range []context.Context{context.Background(), gone} {
			if got := explain(ctx, ctx, err); got != err {
				t.Errorf("explain(%v) = %v, want it unchanged", err, got)
			}
		}
	}
	// Not an answer: still classified.
	if got := explain(context.Background(), context.Background(), fmt.Errorf("sell: %w", context.DeadlineExceeded)); !errors.Is(got, ErrUnavailable) {
		t.Errorf("a deadline of a call, not of the purchase: %v, want ErrUnavailable", got)
	}
}

// BenchmarkExplainSoldOut is the error handling of a sold-out answer, most of a flash sale's.
func BenchmarkExplainSoldOut(b *testing.B) {
	ctx := context.Background()
	err := fmt.Errorf("product %d: %w", 7, inventory.ErrSoldOut)
	b.ReportAllocs()
	for b.Loop() {
		if explain(ctx, ctx, err) != err {
			b.Fatal("changed")
		}
	}
}
