package api_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/seckill/seckill/internal/api"
)

func TestProblemError(t *testing.T) {
	for _, tt := range []struct {
		p    api.Problem
		want string
	}{
		{api.SoldOut(), "409 sold_out: this product is sold out"},
		{api.NewProblem(api.CodeInternal, ""), "500 internal"},
		{api.Problem{Status: 502, Title: "Bad Gateway"}, "502 Bad Gateway"},
		{api.Problem{Status: 503, Detail: "not ready"}, "503 Service Unavailable: not ready"},
	} {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestProblemAs: a wrapped *Problem is found with errors.As, code and all.
func TestProblemAs(t *testing.T) {
	p := api.NewProblem(api.CodeBusy, "")
	p.RetryAfter = "1"
	err := fmt.Errorf("purchase: %w", &p)
	var got *api.Problem
	if !errors.As(err, &got) || got.Code != api.CodeBusy || got.RetryAfter != "1" {
		t.Fatalf("errors.As(%v) = %+v", err, got)
	}
}
