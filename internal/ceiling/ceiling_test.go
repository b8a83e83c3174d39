package ceiling_test

import (
	"encoding/json"
	"go/build"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/ceiling"
)

// TestHandler: a purchase gets exactly the API's sold-out problem; a bad body gets 400.
func TestHandler(t *testing.T) {
	t.Parallel()
	h := ceiling.Handler()
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"user_id":42}`, http.StatusConflict},
		{`{"user_id":`, http.StatusBadRequest},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/v1/products/7/purchase", strings.NewReader(tt.body)))
		if got := w.Code; got != tt.want {
			t.Fatalf("POST %s: status %d, want %d", tt.body, got, tt.want)
		}
		if tt.want != http.StatusConflict {
			continue
		}
		if got := w.Header().Get("Content-Type"); got != api.ContentTypeProblem {
			t.Errorf("Content-Type = %q, want %q", got, api.ContentTypeProblem)
		}
		var got api.Problem
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("body %q: %v", w.Body, err)
		}
		if want := api.SoldOut(); got != want {
			t.Errorf("body = %+v, want the API's %+v", got, want)
		}
	}
}

// TestNotOnTheServicePaths: neither the server nor any package it imports, directly or not,
// imports the ceiling.
func TestNotOnTheServicePaths(t *testing.T) {
	t.Parallel()
	const mod = "github.com/seckill/seckill/"
	seen := map[string]bool{}
	var walk func(path, from string)
	walk = func(path, from string) {
		if seen[path] {
			return
		}
		seen[path] = true
		if path == mod+"internal/ceiling" {
			t.Errorf("%s imports the ceiling", from)
			return
		}
		pkg, err := build.ImportDir("../../"+strings.TrimPrefix(path, mod), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkg.Imports {
			if strings.HasPrefix(p, mod) {
				walk(p, path)
			}
		}
	}
	walk(mod+"cmd/api", "")
	if !seen[mod+"internal/httpapi"] || !seen[mod+"internal/app"] {
		t.Fatalf("the walk from cmd/api missed the service's packages: %v", seen)
	}
}
